/** The folders of `src/` form the layers ARCHITECTURE.md lists: every relative import must be
 * one its folder's row allows, so no import runs back up (madge only sees file cycles). */
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../src");
const ARCHITECTURE = resolve(import.meta.dirname, "../../../ARCHITECTURE.md");

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** A file's layer: its top-level folder under src, or the name of a file directly in src. */
const layerOf = (file: string) => {
  const parts = relative(SRC, file).split(sep);
  return parts.length > 1 ? (parts[0] as string) : (parts[0] as string).replace(/\.(js|ts)$/, "");
};

interface Edge {
  from: string;
  to: string;
  file: string;
  typeOnly: boolean;
}

/** Every relative import or re-export between two layers (the entry `index.ts` is above them all). */
function edges(): Edge[] {
  const found: Edge[] = [];
  const statement = /(import|export)(\s+type)?\s[^;"]*?from\s*"(\.{1,2}\/[^"]+)"|import\s*\(\s*"(\.{1,2}\/[^"]+)"/g;
  for (const file of files(SRC)) {
    const from = layerOf(file);
    if (from === "index") continue;
    for (const m of readFileSync(file, "utf8").matchAll(statement)) {
      const target = (m[3] ?? m[4]) as string;
      const to = layerOf(resolve(dirname(file), target));
      if (to !== from) found.push({ from, to, file: relative(SRC, file), typeOnly: Boolean(m[2]) });
    }
  }
  return found;
}

interface Row {
  layers: string[];
  mayImport: string[];
  typesFrom: string[];
}

/** The layer table of ARCHITECTURE.md, top row first; "everything below" expands to the rows under it. */
function layerTable(markdown: string): Map<string, { values: Set<string>; types: Set<string> }> {
  const section = markdown.slice(markdown.indexOf("| folder | job | may import |"));
  const rows: Row[] = [];
  for (const line of section.split("\n").slice(2)) {
    if (!line.startsWith("|")) break;
    const cells = line.split("|").map((c) => c.trim());
    const layers = [...(cells[1] ?? "").matchAll(/`([a-z-]+)(?:\/|\.ts)`/g)].map((m) => m[1] as string);
    const allowed = (cells[3] ?? "").split(",").map((c) => c.trim());
    rows.push({
      layers,
      mayImport: allowed.filter((a) => /^[a-z-]+$/.test(a)),
      typesFrom: allowed.flatMap((a) => /^([a-z-]+) \(types\)$/.exec(a)?.[1] ?? []),
    });
    if (allowed.includes("everything below")) rows[rows.length - 1]?.mayImport.push("*");
  }
  const table = new Map<string, { values: Set<string>; types: Set<string> }>();
  rows.forEach((row, i) => {
    const below = rows.slice(i + 1).flatMap((r) => r.layers);
    const values = new Set(row.mayImport.flatMap((a) => (a === "*" ? below : [a])));
    for (const layer of row.layers) table.set(layer, { values, types: new Set(row.typesFrom) });
  });
  return table;
}

/** The imports the table does not allow, as `from → to (file)`. */
function violations(found: Edge[], table: ReturnType<typeof layerTable>): string[] {
  return found
    .filter(({ from, to, typeOnly }) => {
      const row = table.get(from);
      if (!row) return true;
      return !row.values.has(to) && !(typeOnly && row.types.has(to));
    })
    .map(({ from, to, file }) => `${from} → ${to} (${file})`);
}

describe("source layers", () => {
  const table = layerTable(readFileSync(ARCHITECTURE, "utf8"));
  const found = edges();

  it("every layer of src has a row in ARCHITECTURE.md", () => {
    const layers = new Set(found.flatMap((e) => [e.from, e.to]));
    expect([...layers].filter((l) => !table.has(l)).sort()).toEqual([]);
  });

  it("every import is one the layer table allows", () => {
    expect(violations(found, table)).toEqual([]);
  });

  it("the check itself catches an import running back up and a type-only exception", () => {
    const md = [
      "| folder | job | may import |",
      "|---|---|---|",
      "| `top/` | x | everything below |",
      "| `mid/` | x | low |",
      "| `low.ts` | x | mid (types) |",
      "",
    ].join("\n");
    const t = layerTable(md);
    const edge = (from: string, to: string, typeOnly = false) => ({ from, to, file: "f.ts", typeOnly });
    expect(violations([edge("top", "low"), edge("mid", "low"), edge("low", "mid", true)], t)).toEqual([]);
    expect(violations([edge("low", "mid"), edge("mid", "top")], t)).toEqual(["low → mid (f.ts)", "mid → top (f.ts)"]);
  });
});
