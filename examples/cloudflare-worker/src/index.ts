/**
 * A Cloudflare Worker running an Engram agent on the WebAssembly core, one Durable Object per
 * user: the object holds that user's thread, AGENTS.md memory and long-term facts in its SQLite
 * storage (strongly consistent), so they survive eviction and concurrent requests lose nothing.
 *
 *   curl -X POST 'https://<worker>/chat?user=u1' -d 'I prefer short answers.'
 *   curl -X POST 'https://<worker>/chat?user=u1' -d 'Explain Durable Objects.'   # remembered
 *   curl -N -H 'accept: text/event-stream' -X POST 'https://<worker>/chat?user=u1' -d 'Again?'   # streamed
 *
 * The model is scripted (FakeChatModel) so the example runs offline; for a real one, pass e.g.
 * `new OpenAICompatibleModel({ baseURL: "https://api.openai.com/v1", model: "gpt-4.1", apiKey: env.OPENAI_API_KEY })`.
 */
import {
  AlarmExtraction,
  type AlarmStorage,
  DurableObjectCheckpointer,
  type DurableObjectSqlStorage,
  DurableObjectStore,
} from "@engram/cloudflare";
import wasmModule from "@engram/wasm/engram_wasm_bg.wasm";
import { CompositeBackend, FakeChatModel, type ModelRequest, StoreBackend, createDeepAgent, loadCore } from "engram";

/** The parts of the Durable Object namespace binding used here (`DurableObjectNamespace`). */
interface UserAgentNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): { fetch(request: Request): Promise<Response> };
}

export interface Env {
  USER_AGENT: UserAgentNamespace;
}

const knowsPreference = (request: ModelRequest) => `${request.system}\n${request.systemContext ?? ""}`.includes("prefers short answers");

/** One user's agent and everything it keeps (with @cloudflare/workers-types, `ctx` is a `DurableObjectState`). */
export class UserAgent {
  readonly #store: DurableObjectStore;
  readonly #checkpointer: DurableObjectCheckpointer;
  readonly #extraction: AlarmExtraction;

  constructor(ctx: { storage: DurableObjectSqlStorage & AlarmStorage }) {
    this.#store = new DurableObjectStore(ctx.storage);
    this.#checkpointer = new DurableObjectCheckpointer(ctx.storage);
    this.#extraction = new AlarmExtraction(ctx.storage);
  }

  async #agent() {
    // Workers cannot compile WebAssembly from bytes: hand over the module wrangler uploaded.
    const core = await loadCore({ wasmModule });
    const model = new FakeChatModel((req) => {
      // Long-term memory's extraction request (it asks for a JSON answer).
      if (req.responseFormat)
        return JSON.stringify({
          newFacts: [{ content: "Prefers short answers", category: "preference", confidence: 0.9 }],
          factsToRemove: [],
        });
      if (req.messages.at(-1)?.role === "tool") return "Saved: you prefer short answers.";
      if (knowsPreference(req)) return "Short answer, as you prefer.";
      return {
        toolCalls: [{ name: "write_file", args: { file_path: "/memories/AGENTS.md", content: "- The user prefers short answers.\n" } }],
      };
    });
    return {
      core,
      agent: createDeepAgent(model, {
        core,
        store: this.#store,
        checkpointer: this.#checkpointer,
        backend: ({ state }) => new CompositeBackend(state, { "/memories/": new StoreBackend({ store: this.#store, core }) }),
        memorySources: ["/memories/AGENTS.md"],
        longTermMemory: true,
      }),
    };
  }

  async fetch(request: Request): Promise<Response> {
    const { core, agent } = await this.#agent();
    const user = new URL(request.url).searchParams.get("user") ?? "anonymous";
    const input = { messages: [{ role: "user" as const, content: await request.text() }] };
    const options = { threadId: "main", userId: user };
    // Long-term memory extracts facts later: kept in storage, run by the alarm (an evicted isolate loses nothing).
    const defer = () => this.#extraction.defer(agent.longTermMemory);
    if (request.headers.get("accept")?.includes("text/event-stream")) {
      // The answer as it is written: one server-sent event per piece of text, then [DONE].
      const encoder = new TextEncoder();
      const events = new ReadableStream<Uint8Array>({
        async start(controller) {
          for await (const event of agent.stream(input, options)) {
            if (event.type === "model_delta" && !event.path) controller.enqueue(encoder.encode(`data: ${JSON.stringify(event.text)}\n\n`));
          }
          await defer();
          controller.enqueue(encoder.encode("data: [DONE]\n\n"));
          controller.close();
        },
      });
      return new Response(events, { headers: { "content-type": "text/event-stream" } });
    }
    const out = await agent.invoke(input, options);
    await defer();
    const body = JSON.stringify({ answer: out.messages.at(-1)?.content, core: core.kind });
    return new Response(body, { headers: { "content-type": "application/json" } });
  }

  async alarm(): Promise<void> {
    await this.#extraction.run((await this.#agent()).agent.longTermMemory);
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const user = new URL(request.url).searchParams.get("user") ?? "anonymous";
    return env.USER_AGENT.get(env.USER_AGENT.idFromName(user)).fetch(request);
  },
};
