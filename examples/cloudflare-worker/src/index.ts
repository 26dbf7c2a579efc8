/**
 * A Cloudflare Worker running an Engram agent on the WebAssembly core. Each user's AGENTS.md
 * memory lives in Workers KV; everything else is per-request thread state.
 *
 *   curl -X POST 'https://<worker>/chat?user=u1' -d 'I prefer short answers.'
 *   curl -X POST 'https://<worker>/chat?user=u1' -d 'Explain KV.'      # the agent remembers
 *
 * The model is scripted (FakeChatModel) so the example runs offline; for a real one, pass a
 * provider's model object, e.g. `createOpenAI({ apiKey: env.OPENAI_API_KEY })("gpt-4.1")`.
 */
import wasmModule from "@engram/wasm/engram_wasm_bg.wasm";
import { CompositeBackend, FakeChatModel, type ModelRequest, StoreBackend, createDeepAgent, loadCore } from "engram";
import { type KvNamespaceLike, KvStore } from "./kv-store.js";

export interface Env {
  MEMORY: KvNamespaceLike;
}

const knowsPreference = (request: ModelRequest) => `${request.system}\n${request.systemContext ?? ""}`.includes("prefers short answers");

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    // Workers cannot compile WebAssembly from bytes: hand over the module wrangler uploaded.
    const core = await loadCore({ wasmModule });
    const user = new URL(request.url).searchParams.get("user") ?? "anonymous";
    const store = new KvStore(env.MEMORY);

    const model = new FakeChatModel((req) => {
      if (req.messages.at(-1)?.role === "tool") return "Saved: you prefer short answers.";
      if (knowsPreference(req)) return "Short answer, as you prefer.";
      return {
        toolCalls: [{ name: "write_file", args: { file_path: "/memories/AGENTS.md", content: "- The user prefers short answers.\n" } }],
      };
    });
    const agent = createDeepAgent(model, {
      core,
      backend: ({ state }) =>
        new CompositeBackend(state, {
          "/memories/": new StoreBackend({ store, namespace: ["users", user] }),
        }),
      memorySources: ["/memories/AGENTS.md"],
    });
    const out = await agent.invoke({ messages: [{ role: "user", content: await request.text() }] }, { threadId: crypto.randomUUID() });
    const body = JSON.stringify({ answer: out.messages.at(-1)?.content, core: core.kind });
    return new Response(body, { headers: { "content-type": "application/json" } });
  },
};
