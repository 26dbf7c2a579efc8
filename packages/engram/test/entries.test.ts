/**
 * The two public entries: `engram` for agent builders, `engram/kit` for implementers. Both list
 * their names (no `export *`, so nothing internal becomes public by accident); the builders'
 * entry stays small; store packages build on the kit only.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const REPO = resolve(fileURLToPath(new URL("../../..", import.meta.url)));
const SRC = join(REPO, "packages/engram/src");
/** The most names `engram` exports (values and types). */
const ENTRY_NAME_BUDGET = 120;

/** The names a module's `export { … }` lists declare, and whether it has an `export *`. */
function exportedNames(file: string, text = readFileSync(file, "utf8")): { names: string[]; star: boolean } {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
  const names: string[] = [];
  let star = false;
  for (const statement of source.statements) {
    if (!ts.isExportDeclaration(statement)) continue;
    const clause = statement.exportClause;
    if (clause === undefined || ts.isNamespaceExport(clause)) star = true;
    else for (const element of clause.elements) names.push(element.name.text);
  }
  return { names, star };
}

/** Every module specifier imported by the `.ts` files under `dir`. */
function importedModules(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const file = join(entry.parentPath, entry.name);
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest);
    for (const statement of source.statements) {
      const specifier = (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier;
      if (specifier && ts.isStringLiteral(specifier)) found.push(specifier.text);
    }
  }
  return found;
}

describe("public entries", () => {
  it(`engram lists its names, at most ${ENTRY_NAME_BUDGET}, none twice`, () => {
    const { names, star } = exportedNames(join(SRC, "index.ts"));
    expect(star).toBe(false);
    expect(names.length).toBeLessThanOrEqual(ENTRY_NAME_BUDGET);
    expect(new Set(names).size).toBe(names.length);
  });

  it("engram/kit lists its names", () => {
    const { names, star } = exportedNames(join(SRC, "kit.ts"));
    expect(star).toBe(false);
    expect(names.length).toBeGreaterThan(0);
  });

  it("the store packages import the kit, never the builders' entry", () => {
    const stores = readdirSync(join(REPO, "packages")).filter((name) => name.startsWith("store-"));
    expect(stores.length).toBeGreaterThanOrEqual(2);
    for (const store of stores) {
      const modules = importedModules(join(REPO, "packages", store, "src"));
      expect(modules, store).not.toContain("engram");
      expect(
        modules.some((m) => m === "engram/kit"),
        store,
      ).toBe(true);
    }
  });

  it("the check itself sees an export * and each listed name", () => {
    const probe = 'export { a } from "./a.js";\nexport * from "./b.js";\nexport { c, type D } from "./c.js";\n';
    expect(exportedNames("probe.ts", probe)).toEqual({ names: ["a", "c", "D"], star: true });
    expect(exportedNames("probe.ts", 'export * as ns from "./n.js";\n').star).toBe(true);
  });
});
