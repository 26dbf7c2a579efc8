/**
 * Composite glob fan-out pushes the pattern's literal directories (and a `**` / `**\/name` rest)
 * down to each mount instead of listing the mount whole, with unchanged answers.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { type Backend, type Core, CompositeBackend, InMemoryStore, StateBackend, StoreBackend, loadCore } from "../src/index.js";

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

/** A StoreBackend mount that records every glob it is asked for. It does not forward the
 * store's capabilities (its resident mirror, its tool text), so the composite asks its `glob`. */
function recorded(): { mount: Backend; asked: { pattern: string; path?: string }[] } {
  const inner = new StoreBackend({ store: new InMemoryStore(), namespace: ["m"], core });
  const asked: { pattern: string; path?: string }[] = [];
  const mount = new Proxy(inner, {
    get(target, key) {
      if (key === "residentMirror" || key === "toolText") return undefined;
      if (key === "glob") {
        return (pattern: string, options: { path?: string } = {}) => {
          asked.push({ pattern, path: options.path });
          return target.glob(pattern, options);
        };
      }
      const v = Reflect.get(target, key, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { mount, asked };
}

async function setup() {
  const { mount, asked } = recorded();
  const main = new StateBackend({ core });
  const c = new CompositeBackend(main, { "/memories/": mount }, { core });
  for (const p of ["/src/a.ts", "/src/b.md", "/memories/notes/x.md", "/memories/notes/deep/y.md", "/memories/top.md", "/memories/z.ts"]) {
    const w = await c.write(p, `content of ${p}\n`);
    if (w.error) throw new Error(w.error.message);
  }
  return { c, asked };
}

const paths = (r: { files?: { path: string }[] }) => r.files?.map((f) => f.path);

describe("composite glob push-down", () => {
  it("narrows a mount to the pattern's literal directory", async () => {
    const { c, asked } = await setup();
    expect(paths(await c.glob("/memories/notes/*.md"))).toEqual(["/memories/notes/x.md"]);
    expect(asked).toEqual([{ pattern: "**", path: "/notes" }]);
  });

  it("passes a last-component pattern on as is", async () => {
    const { c, asked } = await setup();
    expect(paths(await c.glob("**/*.md"))).toEqual(["/memories/notes/deep/y.md", "/memories/notes/x.md", "/memories/top.md", "/src/b.md"]);
    expect(asked).toEqual([{ pattern: "**/*.md", path: "/" }]);
  });

  it("skips a mount the literal directory cannot reach", async () => {
    const { c, asked } = await setup();
    expect(paths(await c.glob("src/*.ts"))).toEqual(["/src/a.ts"]);
    expect(asked).toEqual([]);
  });

  it("keeps exact answers where it cannot narrow (patterns relative to the mount's parent)", async () => {
    const { c } = await setup();
    expect(paths(await c.glob("*/*.ts"))).toEqual(["/memories/z.ts", "/src/a.ts"]);
    expect(paths(await c.glob("memories/**/deep/*.md"))).toEqual(["/memories/notes/deep/y.md"]);
    expect(paths(await c.glob("/memories/missing/*.md"))).toEqual([]);
    expect(paths(await c.glob("*.md", { path: "/memories/notes" }))).toEqual(["/memories/notes/x.md"]);
  });
});
