/** The model-facing filesystem tools and large-result eviction, on the selected core. */
import { beforeAll, describe, expect, it } from "vitest";
import { type Core, StateBackend, type Tool, createFilesystemTools, invokeTool, loadCore } from "../src/index.js";
import { evictLargeResult, safeResultId } from "../src/kit.js";

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

async function setup(files: Record<string, string> = {}, maxOutputChars?: number) {
  const backend = new StateBackend({ core });
  for (const [p, c] of Object.entries(files)) await backend.write(p, c);
  const tools = new Map<string, Tool<never>>(
    createFilesystemTools({ backend, core, ...(maxOutputChars ? { maxOutputChars } : {}) }).map((t) => [t.name, t]),
  );
  const call = (name: string, args: unknown) => invokeTool(tools.get(name) as Tool<never>, args);
  return { backend, call };
}

describe("filesystem tools", () => {
  it("offers exactly the seven tools with descriptions", async () => {
    const tools = createFilesystemTools({ backend: new StateBackend({ core }), core });
    expect(tools.map((t) => t.name)).toEqual(["ls", "read_file", "write_file", "edit_file", "glob", "grep", "delete"]);
    for (const t of tools) expect(t.description.length).toBeGreaterThan(10);
  });

  it("reads cat -n style with a continuation note, accepting `path` and numeric strings", async () => {
    const body = Array.from({ length: 250 }, (_, i) => `row ${i + 1}`).join("\n");
    const { call } = await setup({ "/f.txt": body });
    const first = await call("read_file", { path: "/f.txt", offset: "0", limit: "2" });
    expect(first.content).toBe("     1\trow 1\n     2\trow 2\n\n[Lines 1-2 of 250. Continue with offset=2.]");
    const last = await call("read_file", { file_path: "/f.txt", offset: 248 });
    expect(last.content).toBe("   249\trow 249\n   250\trow 250");
    const defaultLimit = await call("read_file", { file_path: "/f.txt" });
    expect(defaultLimit.content.split("\n").filter((l) => /^\s+\d+\t/.test(l)).length).toBe(100);
  });

  it("explains empty files, offsets past the end and errors", async () => {
    const { call } = await setup({ "/empty.md": "", "/one.md": "x\n" });
    expect((await call("read_file", { file_path: "/empty.md" })).content).toContain("exists but is empty");
    expect((await call("read_file", { file_path: "/one.md", offset: 9 })).content).toContain("past the end");
    const missing = await call("read_file", { file_path: "/nope.md" });
    expect(missing).toEqual({ content: "Error: File not found: '/nope.md'", isError: true });
    const escaped = await call("read_file", { file_path: "/../etc/passwd" });
    expect(escaped.isError).toBe(true);
    expect(escaped.content).toContain("escapes the root");
  });

  it("rejects malformed arguments with a readable error", async () => {
    const { call } = await setup();
    const r = await call("read_file", { offset: "ten" });
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/invalid arguments for read_file: .*file_path/);
    expect((await call("grep", { pattern: "x", max_count: 0 })).isError).toBe(true);
  });

  it("writes, edits and deletes with short confirmations", async () => {
    const { call, backend } = await setup();
    expect((await call("write_file", { file_path: "/a/b.md", content: "one one" })).content).toBe("Wrote /a/b.md");
    expect((await call("edit_file", { file_path: "/a/b.md", old_string: "one", new_string: "two" })).content).toContain("appears 2 times");
    expect((await call("edit_file", { file_path: "/a/b.md", old_string: "one", new_string: "two", replace_all: "true" })).content).toBe(
      "Replaced 2 occurrences in /a/b.md",
    );
    expect((await backend.read("/a/b.md")).content).toBe("two two");
    expect((await call("delete", { file_path: "/a" })).content).toBe("Deleted /a (1 file)");
  });

  it("formats ls, glob and grep for a model", async () => {
    const { call } = await setup({ "/src/a.ts": "const x = 1;\n// TODO fix\n", "/src/b.ts": "TODO\n", "/README.md": "hi\n" });
    expect((await call("ls", { path: "/" })).content).toBe("/README.md (3 bytes)\n/src/ (directory)");
    expect((await call("ls", {})).content).toContain("/src/ (directory)");
    expect((await call("glob", { pattern: "**/*.ts" })).content).toBe("/src/a.ts\n/src/b.ts");
    expect((await call("glob", { pattern: "*.py" })).content).toBe("No files found matching pattern '*.py'");
    expect((await call("grep", { pattern: "TODO" })).content).toBe("/src/a.ts\n/src/b.ts");
    expect((await call("grep", { pattern: "TODO", output_mode: "content" })).content).toBe(
      "/src/a.ts:\n  2: // TODO fix\n/src/b.ts:\n  1: TODO",
    );
    expect((await call("grep", { pattern: "TODO", output_mode: "count" })).content).toBe("/src/a.ts: 1\n/src/b.ts: 1");
    expect((await call("grep", { pattern: "TODO", output_mode: "content", context: "1", path: "/src/a.ts" })).content).toBe(
      "/src/a.ts:\n  1- const x = 1;\n  2: // TODO fix",
    );
    const capped = await call("grep", { pattern: "TODO", max_count: "1" });
    expect(capped.content).toContain("/src/a.ts");
    expect(capped.content).toContain("stopped at the maximum count");
    expect((await call("grep", { pattern: "zzz" })).content).toBe("No matches found for pattern 'zzz'");
  });

  it("caps output size with a note", async () => {
    const body = Array.from({ length: 100 }, (_, i) => `line ${i} ${"x".repeat(50)}`).join("\n");
    const { call } = await setup({ "/big.txt": body }, 500);
    const r = await call("read_file", { file_path: "/big.txt" });
    expect(r.content.length).toBeLessThan(700);
    expect(r.content).toContain("Output truncated at 500 characters");
  });
});

describe("large tool results", () => {
  it("evicts to /large_tool_results with a head/tail preview", async () => {
    const backend = new StateBackend({ core });
    const big = Array.from({ length: 40_000 }, (_, i) => `result row ${i}`).join("\n");
    const msg = await evictLargeResult(big, { backend, core, toolCallId: "call/1.x" });
    expect(msg).toContain("saved to /large_tool_results/call_1_x.txt");
    expect(msg).toContain("     1\tresult row 0");
    expect(msg).toContain("... [39990 lines truncated] ...");
    expect(msg).toContain(" 40000\tresult row 39999");
    expect((await backend.read("/large_tool_results/call_1_x.txt", { offset: 39_999 })).content).toBe("result row 39999");
    expect(await evictLargeResult("small", { backend, core, toolCallId: "c2" })).toBe("small");
  });

  it("hashes long ids and says so when the result cannot be saved", async () => {
    const long = await safeResultId("x".repeat(500));
    expect(long).toMatch(/^call-[0-9a-f]{64}$/);
    expect(await safeResultId("x".repeat(500))).toBe(long);
    const backend = new StateBackend({ core });
    await backend.write("/large_tool_results", "a file where a directory should be");
    const msg = await evictLargeResult("y\n".repeat(50_000), { backend, core, toolCallId: "c3" });
    expect(msg).toContain("could not be saved");
    expect(msg).toContain("     1\ty");
  });
});
