/** Per-model-call memory refresh: the slot-1 middleware over an AGENTS.md of a given size. */
import { type Core, type HookContext, StateBackend } from "engram";
import { memoryMiddleware } from "engram/kit";

/** Builds one refresh call; `changed` rewrites the file first, so the call must re-read it. */
export async function memoryRefresh(core: Core, bytes: number, changed: boolean): Promise<() => Promise<boolean>> {
  const backend = new StateBackend({ core });
  const line = "- The user prefers concise answers; the project uses pnpm and Rust 2021.\n";
  const body = line.repeat(Math.max(1, Math.round(bytes / line.length)));
  await backend.write("/AGENTS.md", body);
  const mw = memoryMiddleware({ backend, sources: ["/AGENTS.md"] });
  const ctx = {
    threadId: "bench",
    depth: 0,
    state: { messages: [{ role: "user", content: "hi" }], data: {} },
    warn: () => undefined,
    interrupt: () => undefined,
  } as unknown as HookContext;
  const request = { system: "You are a helpful assistant.", messages: [], tools: [] };
  let n = 0;
  return async () => {
    if (changed) await backend.write("/AGENTS.md", `${body}- edit ${n++}\n`);
    const out = await mw.beforeModel?.(request, ctx);
    // The memory is volatile: it rides in the request's systemContext, after the static system prompt.
    const context = out?.systemContext ?? "";
    return context.includes("<agent_memory>") && context.includes("pnpm");
  };
}
