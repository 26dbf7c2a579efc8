/**
 * The filesystem tools' text is made in the core: a State or Store backend makes it in one call
 * (`Backend.toolText`), any other backend's structured result goes through the core's formatter.
 * Both paths must give exactly the text the TypeScript formatter gave before the move (kept
 * below as the oracle), under every output cap, on both cores.
 */
import { describe, expect, it } from "vitest";
import { cutAt } from "../src/core/text.js";
import {
  type Backend,
  type FileInfo,
  InMemoryStore,
  StateBackend,
  StoreBackend,
  type Tool,
  createFilesystemTools,
  invokeTool,
} from "../src/index.js";
import type { GlobResult, GrepResult, LsResult, ReadResult } from "../src/kit.js";
import { core } from "./fixtures/session.js";
import { prng } from "../src/testing/api.js";

// ---- the oracle: the TypeScript formatter as it was before the rules moved to the core ----
function capOutput(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.lastIndexOf("\n", max);
  const kept = cutAt(text, cut > max / 2 ? cut : max);
  return `${kept}\n\n[Output truncated at ${max.toLocaleString("en-US")} characters: narrow the path, pattern or line range.]`;
}
function formatLs(path: string, entries: FileInfo[]): string {
  if (entries.length === 0) return `No files found in ${path}`;
  return entries.map((e) => (e.isDir ? `${e.path} (directory)` : `${e.path} (${e.size ?? 0} bytes)`)).join("\n");
}
function formatRead(path: string, r: ReadResult, limit: number): string {
  if (r.totalLines === 0) return `System reminder: '${path}' exists but is empty.`;
  if (r.lines === 0) {
    return `Note: offset ${r.offset} is past the end of '${path}' (${r.totalLines} lines). Use an offset below ${r.totalLines}.`;
  }
  let out = core.formatNumbered(r.content, r.offset + 1);
  const next = r.offset + r.lines;
  if (next < r.totalLines && r.lines >= limit)
    out += `\n\n[Lines ${r.offset + 1}-${next} of ${r.totalLines}. Continue with offset=${next}.]`;
  return out;
}
function formatGrep(pattern: string, r: GrepResult): string {
  const lines: string[] = [];
  if (r.matches) {
    let current = "";
    for (const m of r.matches) {
      if (m.path !== current) {
        current = m.path;
        lines.push(`${m.path}:`);
      }
      lines.push(`  ${m.line}${m.context ? "-" : ":"} ${m.text}`);
    }
  } else if (r.files) {
    for (const f of r.files) lines.push(f);
  } else if (r.counts) {
    for (const [f, n] of Object.entries(r.counts)) lines.push(`${f}: ${n}`);
  }
  if (lines.length === 0) return `No matches found for pattern '${pattern}'`;
  if (r.truncated)
    lines.push("", "Note: the search stopped at the maximum count; there are more matches. Narrow the search or raise max_count.");
  return lines.join("\n");
}
function formatGlob(pattern: string, files: FileInfo[], truncated: boolean): string {
  if (files.length === 0) return `No files found matching pattern '${pattern}'`;
  const lines = files.map((f) => f.path);
  if (truncated) lines.push("", "Note: more files match; narrow the pattern or the path.");
  return lines.join("\n");
}
// ---- end of the oracle ----

const WORDS = ["alpha", "beta", "hit", "HIT", "γάμμα", "😀", "日本語", "x".repeat(300), "", "\t", "hit😀hit"];

/** Files with Unicode, emoji, long and empty lines, CRLF and planted `hit`s. */
function corpus(seed: number): Record<string, string> {
  const r = prng(seed);
  const pick = () => WORDS[Math.floor(r() * WORDS.length)] as string;
  const files: Record<string, string> = {};
  for (let f = 0; f < 12; f++) {
    const lines = Array.from({ length: Math.floor(r() * 40) }, () => Array.from({ length: 1 + Math.floor(r() * 5) }, pick).join(" "));
    const nl = r() < 0.2 ? "\r\n" : "\n";
    files[`/d${f % 3}/${f % 2 ? "sub/" : ""}f${f}.${f % 4 ? "ts" : "md"}`] = lines.join(nl) + (r() < 0.5 ? nl : "");
  }
  files["/empty.txt"] = "";
  files["/big.txt"] = Array.from({ length: 3000 }, (_, i) => `hit ${i} ${"é".repeat(i % 7)}😀`).join("\n");
  return files;
}

/** The same backend without `toolText`: the tools take the structured path. */
function structuredOnly(backend: Backend): Backend {
  return {
    ls: (p) => backend.ls(p),
    read: (p, o) => backend.read(p, o),
    readBytes: (p) => backend.readBytes(p),
    write: (p, c, o) => backend.write(p, c, o),
    edit: (p, a, b, o) => backend.edit(p, a, b, o),
    grep: (p, o) => backend.grep(p, o),
    glob: (p, o) => backend.glob(p, o),
    delete: (p) => backend.delete(p),
    stat: (p) => backend.stat(p),
  };
}

type Call = [tool: string, args: Record<string, unknown>];
const CALLS: Call[] = [
  ["ls", { path: "/" }],
  ["ls", { path: "/d1" }],
  ["ls", { path: "d0/sub" }],
  ["ls", { path: "/missing" }],
  ["read_file", { file_path: "/big.txt" }],
  ["read_file", { file_path: "/big.txt", offset: 2990, limit: 50 }],
  ["read_file", { file_path: "/big.txt", offset: 100, limit: 2000 }],
  ["read_file", { file_path: "/empty.txt" }],
  ["read_file", { file_path: "/big.txt", offset: 5000 }],
  ["read_file", { file_path: "/d0/f0.md" }],
  ["read_file", { file_path: "/nope" }],
  ["glob", { pattern: "**/*.ts" }],
  ["glob", { pattern: "*.py" }],
  ["glob", { pattern: "*", path: "/d1" }],
  ["grep", { pattern: "hit", output_mode: "content" }],
  ["grep", { pattern: "hit", output_mode: "content", max_count: 7 }],
  ["grep", { pattern: "hit", output_mode: "content", context: 2, path: "/d2" }],
  ["grep", { pattern: "HIT", output_mode: "content", ignore_case: true, max_count: 50 }],
  ["grep", { pattern: "hit" }],
  ["grep", { pattern: "hit", output_mode: "count" }],
  ["grep", { pattern: "hit", output_mode: "files_with_matches", max_count: 2 }],
  ["grep", { pattern: "h.t\\d", regex: true, output_mode: "content" }],
  ["grep", { pattern: "zzz_absent" }],
  ["grep", { pattern: "(", regex: true }],
  ["grep", { pattern: "x", path: "/missing" }],
];

/** What the tools gave before the move, for the same backend and cap. */
async function oracle(backend: Backend, [tool, a]: Call, max: number): Promise<string> {
  const err = (e: { message: string }) => `Error: ${e.message}`;
  switch (tool) {
    case "ls": {
      const r = await backend.ls(a.path as string);
      return r.error ? err(r.error) : capOutput(formatLs(a.path as string, r.entries), max);
    }
    case "read_file": {
      const limit = (a.limit as number | undefined) ?? 100;
      const r = await backend.read(a.file_path as string, { offset: (a.offset as number | undefined) ?? 0, limit });
      return r.error ? err(r.error) : capOutput(formatRead(a.file_path as string, r, limit), max);
    }
    case "glob": {
      const r = await backend.glob(a.pattern as string, { path: (a.path as string | undefined) ?? "/" });
      return r.error ? err(r.error) : capOutput(formatGlob(a.pattern as string, r.files, r.truncated), max);
    }
    default: {
      const r = await backend.grep(a.pattern as string, {
        path: (a.path as string | undefined) ?? "/",
        outputMode: (a.output_mode as "content" | undefined) ?? "files_with_matches",
        maxCount: (a.max_count as number | undefined) ?? 1000,
        regex: a.regex === true,
        ignoreCase: a.ignore_case === true,
        ...(a.context !== undefined && { context: a.context as number }),
      });
      return r.error ? err(r.error) : capOutput(formatGrep(a.pattern as string, r), max);
    }
  }
}

async function toolsFor(backend: Backend, max: number) {
  const tools = new Map<string, Tool<never>>(createFilesystemTools({ backend, core, maxOutputChars: max }).map((t) => [t.name, t]));
  return async ([name, args]: Call) => (await invokeTool(tools.get(name) as Tool<never>, args)).content;
}

describe("tool text made in the core", () => {
  for (const [label, make] of [
    ["StateBackend", () => new StateBackend({ core })],
    ["StoreBackend", () => new StoreBackend({ store: new InMemoryStore(), core })],
  ] as const) {
    it(`${label}: the core-made text equals the old formatter's, and so does the structured path`, async () => {
      for (const seed of [1, 2]) {
        const backend = make();
        for (const [p, c] of Object.entries(corpus(seed))) expect((await backend.write(p, c)).error).toBeUndefined();
        for (const max of [80_000, 5_000, 777, 120, 31]) {
          const direct = await toolsFor(backend, max);
          const structured = await toolsFor(structuredOnly(backend), max);
          for (const call of CALLS) {
            const want = await oracle(backend, call, max);
            expect(await direct(call), `${label} ${JSON.stringify(call)} cap ${max}`).toBe(want);
            expect(await structured(call), `structured ${JSON.stringify(call)} cap ${max}`).toBe(want);
          }
        }
      }
    });
  }

  it("a grep with 90k matching lines never builds them as objects on the tool path", async () => {
    const backend = new StateBackend({ core });
    const files: [string, string][] = Array.from({ length: 900 }, (_, i) => [`/src/f${i}.ts`, "  return value;\n".repeat(100)]);
    expect((await backend.writeMany(files)).error).toBeUndefined();
    let structuredCalls = 0;
    const counted = new Proxy(backend, {
      get(target, key) {
        if (key === "grep") structuredCalls++;
        const v = Reflect.get(target, key, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const run = await toolsFor(counted, 80_000);
    const out = await run(["grep", { pattern: "return", output_mode: "content", max_count: 100_000 }]);
    expect(structuredCalls).toBe(0);
    expect(out.length).toBeLessThan(80_200);
    expect(out).toMatch(/^\/src\/f0\.ts:\n {2}1: {3}return value;\n/);
    expect(out.endsWith("[Output truncated at 80,000 characters: narrow the path, pattern or line range.]")).toBe(true);
    // The structured API still returns every line (up to the core's ceiling of 10,000).
    expect((await backend.grep("return", { outputMode: "content", maxCount: 100_000 })).matches).toHaveLength(10_000);
  });

  it("the core formatter refuses wrong argument types with invalid_argument", () => {
    expect(() => core.capOutput(42 as unknown as string, 10)).toThrow(expect.objectContaining({ code: "invalid_argument" }));
    expect(() => core.formatGlob("*", { files: [], truncated: false }, "x" as unknown as number)).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
    // The shapes these took before they took the result, and results with a broken entry.
    const invalid = expect.objectContaining({ code: "invalid_argument" });
    expect(() => core.formatGlob("*", [] as unknown as GlobResult, 100)).toThrow(invalid);
    expect(() => core.formatLs("/", [{ path: "/a", isDir: false }] as unknown as LsResult, 100)).toThrow(invalid);
    expect(() => core.formatGlob("*", { files: [{ path: 7 }], truncated: false } as unknown as GlobResult, 100)).toThrow(invalid);
    expect(() => core.formatLs("/", { entries: [], skipped: [{ path: "/x" }] } as unknown as LsResult, 100)).toThrow(invalid);
    expect(() => core.formatGrep("x", { files: [], truncated: false, skipped: "none" } as unknown as GrepResult, 100)).toThrow(invalid);
    const t = core.createFileTable();
    expect(t.lsText("/\uD800", "/\uD800", 100).error?.code).toBe("invalid_path");
    expect(t.grepText({ pattern: "a[ab]{20}c", regex: true, path: "/nope" }, 100).error?.code).toBe("file_not_found");
  });
});
