/** The folders of `src/` form layers: no folder imports, directly or through others, a folder
 * that imports it back (madge only sees file cycles; these are folder cycles). */
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../src");

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** The top-level folder of a file under src ("" for files directly in src). */
const folderOf = (file: string) => {
  const parts = relative(SRC, file).split(sep);
  return parts.length > 1 ? (parts[0] as string) : "";
};

/** folder → folders it imports (relative imports only, type-only imports included). */
function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of files(SRC)) {
    const from = folderOf(file);
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)) {
      const to = folderOf(resolve(dirname(file), m[1] as string));
      if (from === "" || to === "" || to === from) continue;
      let set = graph.get(from);
      if (!set) graph.set(from, (set = new Set()));
      set.add(to);
    }
  }
  return graph;
}

/** Every folder cycle, each as a path `a → b → … → a`. */
function cycles(graph: Map<string, Set<string>>): string[] {
  const found = new Set<string>();
  const walk = (start: string, node: string, path: string[]) => {
    for (const next of graph.get(node) ?? []) {
      if (next === start) found.add([...path, next].join(" → "));
      else if (!path.includes(next) && next > start) walk(start, next, [...path, next]);
    }
  };
  for (const start of [...graph.keys()].sort()) walk(start, start, [start]);
  return [...found];
}

describe("source layers", () => {
  const graph = folderGraph();

  it("has no folder cycle", () => {
    expect(cycles(graph)).toEqual([]);
  });

  it("keeps stores, middleware and tools below the agent", () => {
    expect(graph.get("stores")?.has("agent") ?? false).toBe(false);
    expect(graph.get("middleware")?.has("agent") ?? false).toBe(false);
    expect(graph.get("tools")?.has("agent") ?? false).toBe(false);
    expect(graph.get("tools")?.has("middleware") ?? false).toBe(false);
  });

  it("finds a cycle when there is one (the check itself works)", () => {
    const g = new Map([
      ["a", new Set(["b"])],
      ["b", new Set(["c"])],
      ["c", new Set(["a"])],
    ]);
    expect(cycles(g)).toEqual(["a → b → c → a"]);
  });
});
