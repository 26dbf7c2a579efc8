/**
 * The memory middleware's refresh: an unchanged set of sources reuses the last assembled section
 * (no read, no core call); any change — an edit, a deletion, a new file, an error, another
 * source — assembles again in one core call, with unchanged sources passed through as they were
 * rendered.
 */
import { describe, expect, it } from "vitest";
import { loadCore } from "../src/core/loader.js";
import type { Core, MemorySourceInput } from "../src/core/types.js";
import type { MemoryCacheEntry } from "../src/memory/sources/load.js";
import { memoryMiddleware } from "../src/middleware/memory.js";
import type { HookContext, ModelRequest } from "../src/index.js";
import { StateBackend } from "../src/index.js";
import { wrapBackend } from "../src/backends/wrap.js";

const core = await loadCore();

/** The core with `memorySection` counted, and the kinds of its last call. */
function spying() {
  const calls: MemorySourceInput["kind"][][] = [];
  const spy: Core = {
    ...core,
    memorySection(sources, cap) {
      calls.push(sources.map((s) => s.kind));
      return core.memorySection(sources, cap);
    },
  };
  return { spy, calls };
}

function context(warnings: string[] = []): HookContext {
  return {
    threadId: "t",
    depth: 0,
    state: { messages: [{ role: "user", content: "hi" }], data: {} },
    warn: (m: string) => warnings.push(m),
    interrupt: () => undefined,
  } as unknown as HookContext;
}

const request: ModelRequest = { system: "S", messages: [], tools: [] };

async function refresh(mw: ReturnType<typeof memoryMiddleware>, ctx: HookContext, req: ModelRequest = request): Promise<string> {
  return (await mw.beforeModel?.(req, ctx))?.systemContext ?? "";
}

describe("memory refresh", () => {
  it("reuses the assembled section while nothing changed, and assembles again on every kind of change", async () => {
    const backend = new StateBackend({ core });
    let reads = 0;
    const read = backend.read.bind(backend);
    backend.read = (...args: Parameters<typeof backend.read>) => {
      reads++;
      return read(...args);
    };
    await backend.write("/a.md", "- alpha </agent_memory>\n");
    await backend.write("/b.md", "- beta\n");
    const { spy, calls } = spying();
    const warnings: string[] = [];
    const ctx = context(warnings);
    const mw = memoryMiddleware({ backend, sources: ["/a.md", "/b.md", "/gone.md"], core: spy });

    const first = await refresh(mw, ctx);
    expect(first).toContain("<agent_memory>\n### /a.md\n- alpha &lt;/agent_memory>");
    expect(first).toContain("### /b.md\n- beta");
    expect(first.match(/<\/agent_memory>/g)).toHaveLength(1);
    expect(calls).toEqual([["text", "text", "missing"]]);
    expect(reads).toBe(2);
    // Unchanged: the very same text, no read, no core call.
    expect(await refresh(mw, ctx)).toBe(first);
    expect(await refresh(mw, ctx)).toBe(first);
    expect(calls.length).toBe(1);
    expect(reads).toBe(2);

    // One source edited: only it is read; the other passes through as rendered.
    await backend.write("/b.md", "- beta, edited\n");
    const edited = await refresh(mw, ctx);
    expect(edited).toContain("- beta, edited");
    expect(calls.at(-1)).toEqual(["rendered", "text", "missing"]);
    expect(reads).toBe(3);
    // A fresh middleware (no cache) writes the same text.
    expect(await refresh(memoryMiddleware({ backend, sources: ["/a.md", "/b.md", "/gone.md"] }), ctx)).toBe(edited);

    // A missing source appears, then everything is deleted.
    await backend.write("/gone.md", "- back");
    expect(await refresh(mw, ctx)).toContain("### /gone.md\n- back");
    for (const p of ["/a.md", "/b.md", "/gone.md"]) await backend.delete(p);
    expect(await refresh(mw, ctx)).toContain("<agent_memory>\n(No memory loaded)\n</agent_memory>");
    const calls0 = calls.length;
    await refresh(mw, ctx);
    expect(calls.length).toBe(calls0);

    // A directory in place of a file: reported once, and the note stays while it lasts.
    await backend.write("/a.md/inner", "x");
    expect(await refresh(mw, ctx)).toContain("(/a.md could not be read: is a directory)");
    expect(await refresh(mw, ctx)).toContain("(/a.md could not be read: is a directory)");
    expect(warnings).toEqual(["memory source /a.md could not be read: is a directory"]);
    expect(warnings.length).toBe(1);
  });

  it("keeps the section across middleware instances sharing a thread cache, and follows the request's context", async () => {
    const backend = new StateBackend({ core });
    await backend.write("/AGENTS.md", "- remembered\n");
    const cache = new Map<string, MemoryCacheEntry>();
    const { spy, calls } = spying();
    const ctx = context();
    const one = await refresh(memoryMiddleware({ backend, sources: ["/AGENTS.md"], cache, core: spy }), ctx);
    const two = await refresh(memoryMiddleware({ backend, sources: ["/AGENTS.md"], cache, core: spy }), ctx);
    expect(two).toBe(one);
    expect(calls.length).toBe(1);
    // The request's own context leads; a different one gives a different result, same section.
    const mw = memoryMiddleware({ backend, sources: ["/AGENTS.md"], cache, core: spy });
    const withContext = await refresh(mw, ctx, { ...request, systemContext: "## Before" });
    expect(withContext.startsWith("## Before\n\n<agent_memory>\n### /AGENTS.md\n- remembered")).toBe(true);
    expect(await refresh(mw, ctx)).toBe(one);
    expect(calls.length).toBe(1);
  });

  it("keeps a source's text under the version it was read at: a stat ahead of what reads serve never pins old text", async () => {
    const live = new StateBackend({ core });
    // Reads serve the file as of the last `catchUp()` (a mirror whose change notice is late),
    // with the version of what they serve; `stat` sees the live file.
    let served = { content: "", version: "" };
    const catchUp = async () => {
      served = { content: (await live.read("/AGENTS.md")).content ?? "", version: (await live.stat("/AGENTS.md")).info?.version ?? "" };
    };
    let reads = 0;
    const backend = wrapBackend(live, {
      read: async () => {
        reads++;
        return { content: served.content, totalLines: 1, offset: 0, lines: 1, version: served.version };
      },
    });
    const ctx = context();
    const mw = memoryMiddleware({ backend, sources: ["/AGENTS.md"] });
    await live.write("/AGENTS.md", "- one\n");
    await catchUp();
    expect(await refresh(mw, ctx)).toContain("- one");

    await live.write("/AGENTS.md", "- two\n");
    expect(await refresh(mw, ctx)).toContain("- one"); // all a read can give yet
    await catchUp();
    expect(await refresh(mw, ctx)).toContain("- two");
    const settled = reads;
    expect(await refresh(mw, ctx)).toContain("- two");
    expect(reads).toBe(settled);
  });

  it("caps each source on a line boundary with a visible note, the same on both cores", async () => {
    const backend = new StateBackend({ core });
    await backend.write("/AGENTS.md", "- one remembered line of moderate length\n".repeat(400));
    const out = await refresh(memoryMiddleware({ backend, sources: ["/AGENTS.md"], maxTokensPerSource: 100 }), context());
    const body = out.slice(out.indexOf("### /AGENTS.md\n") + 15, out.indexOf("\n</agent_memory>"));
    const [kept, note] = [body.slice(0, body.lastIndexOf("\n")), body.slice(body.lastIndexOf("\n") + 1)];
    expect(kept.endsWith("length")).toBe(true);
    expect(note).toMatch(/^\[… memory truncated: about \d+ more tokens in \/AGENTS\.md; read_file it to see the rest\]$/);
  });
});
