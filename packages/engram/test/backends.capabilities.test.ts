/**
 * Capabilities are methods (backends/capabilities.ts): a `StateBackend` behind a user's Proxy or
 * a subclass keeps its resident table, so a `CompositeBackend` over it lists and searches in the
 * core exactly as over a plain one — same answers, and the fast path taken (counted on the
 * core's router and fan-outs). A wrapper that answers reads itself hides them, and is asked.
 */
import { describe, expect, it } from "vitest";
import { changeMark } from "../src/backends/change-mark.js";
import { wrapBackend } from "../src/backends/wrap.js";
import { type Backend, CompositeBackend, type Core, StateBackend, loadCore } from "../src/index.js";
import type { ToolTextRequest } from "../src/kit.js";
import { toolText } from "../src/tools/format.js";

const realCore = await loadCore();

/** The core with the calls made on its routers and their fan-outs counted by method name. */
function countingCore(): { core: Core; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const count = (name: string) => calls.set(name, (calls.get(name) ?? 0) + 1);
  const spy = <T extends object>(target: T, prefix: string): T =>
    new Proxy(target, {
      get(t, key) {
        const value = Reflect.get(t, key, t);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          count(`${prefix}.${String(key)}`);
          const out = value.apply(t, args) as unknown;
          // A fan-out is made by the router: its own calls (add, finish, text) are counted too.
          if (out && typeof out === "object" && "fan" in out) return { ...out, fan: spy((out as { fan: object }).fan, "fan") };
          return out;
        };
      },
    });
  const core = new Proxy(realCore, {
    get(t, key) {
      const value = Reflect.get(t, key, t);
      if (key === "createRouter") return (...args: unknown[]) => spy((value as (...a: unknown[]) => object).apply(t, args), "router");
      return typeof value === "function" ? value.bind(t) : value;
    },
  });
  return { core, calls };
}

/** A user's wrapper: a Proxy that logs every call and forwards everything to the backend. */
function logged(backend: StateBackend, log: string[]): StateBackend {
  return new Proxy(backend, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        log.push(String(key));
        return value.apply(target, args);
      };
    },
  });
}

/** A user's subclass: counts its writes and leaves everything else to `StateBackend`. */
class CountingState extends StateBackend {
  writes = 0;
  override async write(...args: Parameters<StateBackend["write"]>) {
    this.writes++;
    return super.write(...args);
  }
}

const FILES: Record<string, string> = {
  "/src/a.ts": "alpha\nbeta\n",
  "/src/b.md": "alpha beta\n",
  "/notes/c.md": "gamma alpha\n",
  "/m/d.md": "alpha in the mount\n",
  "/m/deep/e.txt": "beta\n",
};

const REQUESTS: ToolTextRequest[] = [
  { op: "grep", pattern: "alpha", options: {} },
  { op: "grep", pattern: "beta", options: { path: "/src", outputMode: "count" } },
  { op: "glob", pattern: "**/*.md", path: "/" },
  { op: "ls", path: "/m" },
];

type Variant = "plain" | "proxy" | "subclass";

async function composite(variant: Variant, where: "default" | "mount") {
  const { core, calls } = countingCore();
  const log: string[] = [];
  const make = (): StateBackend =>
    variant === "plain"
      ? new StateBackend({ core })
      : variant === "proxy"
        ? logged(new StateBackend({ core }), log)
        : new CountingState({ core });
  const other = new StateBackend({ core });
  const shown = make();
  const c =
    where === "default" ? new CompositeBackend(shown, { "/m/": other }, { core }) : new CompositeBackend(other, { "/m/": shown }, { core });
  for (const [path, text] of Object.entries(FILES)) expect((await c.write(path, text)).error).toBeUndefined();
  calls.clear();
  return { c, calls, log, shown };
}

/** Everything a model sees of the composite: listings, searches and their tool texts (without
 * modification times, which differ between two composites written a moment apart). */
async function answers(c: CompositeBackend): Promise<unknown> {
  const out: unknown[] = [await c.ls("/"), await c.ls("/src"), await c.ls("/m"), await c.ls("/m/deep")];
  out.push(await c.grep("alpha"), await c.grep("beta", { outputMode: "files_with_matches" }), await c.glob("**/*.md"));
  for (const r of REQUESTS) out.push(await toolText(c, realCore, r, 2000));
  return JSON.parse(JSON.stringify(out, (key, value) => (key === "modifiedAt" ? undefined : value)));
}

describe("capabilities are methods", () => {
  for (const where of ["default", "mount"] as const) {
    it(`a Proxy-wrapped or subclassed StateBackend as the ${where} backend answers as a plain one, on the fast path`, async () => {
      const plain = await composite("plain", where);
      const expected = await answers(plain.c);
      const fastCalls = new Map(plain.calls);
      // The fast path: listed from the table, searched and formatted in one fan-out.
      expect(fastCalls.get("router.lsTable")).toBeGreaterThan(0);
      expect(fastCalls.get("fan.finish")).toBeGreaterThan(0);
      expect(fastCalls.get("fan.text")).toBeGreaterThan(0);
      for (const slow of ["router.mergeLs", "router.mergeGrep", "router.mergeGlob"]) expect(fastCalls.get(slow), slow).toBeUndefined();

      for (const variant of ["proxy", "subclass"] as const) {
        const other = await composite(variant, where);
        expect(await answers(other.c), variant).toEqual(expected);
        expect(other.calls, `${variant}: the same core calls`).toEqual(fastCalls);
        if (variant === "proxy") {
          expect(other.log).toContain("residentTable");
          // Its own reading methods were never needed.
          for (const read of ["ls", "grep", "glob"]) expect(other.log, read).not.toContain(read);
        } else expect((other.shown as CountingState).writes).toBeGreaterThan(0);
      }
    });
  }

  it("a Proxy-wrapped or subclassed StateBackend tells that nothing changed, alone and in a composite", async () => {
    for (const backend of [logged(new StateBackend(), []), new CountingState(), wrapBackend(new StateBackend(), {})] as Backend[]) {
      for (const shown of [backend, new CompositeBackend(backend, { "/m/": new StateBackend() })]) {
        const mark = changeMark(shown);
        expect(mark).toBeDefined();
        const before = await mark?.();
        expect(await mark?.()).toEqual(before);
        await shown.write("/x.md", "x");
        expect(await mark?.()).not.toEqual(before);
      }
    }
  });

  it("a wrapper that answers reads itself hides the capabilities, and the composite asks it", async () => {
    const inner = new StateBackend();
    await inner.write("/a.md", "secret alpha\n");
    const asked: string[] = [];
    const censored = wrapBackend(inner, {
      read: async (path, options) => {
        asked.push(`read ${path}`);
        const r = await inner.read(path, options);
        return r.error ? r : { ...r, content: r.content.replaceAll("secret", "******") };
      },
      grep: async (pattern, options) => {
        asked.push(`grep ${pattern}`);
        return pattern === "secret" ? { matches: [], truncated: false } : inner.grep(pattern, options);
      },
    });
    for (const name of ["residentTable", "changeMark", "toolText"]) expect(name in censored, name).toBe(false);
    expect(changeMark(censored)).toBeUndefined();
    // The tools read through the wrapper, never from the table behind it.
    const text = await toolText(censored, realCore, { op: "read", path: "/a.md", offset: 0, limit: 10 }, 1000);
    expect(text.content).toContain("****** alpha");
    expect(text.content).not.toContain("secret");
    const c = new CompositeBackend(new StateBackend(), { "/m/": censored });
    expect(changeMark(c)).toBeUndefined();
    expect((await c.grep("secret")).matches).toEqual([]);
    expect(asked).toEqual(["read /a.md", "grep secret"]);
  });

  it("a wrapper that replaces writes only keeps them: its writes reach the same table", async () => {
    const inner = new StateBackend();
    const writes: string[] = [];
    const recorded = wrapBackend(inner, {
      write: (path, content, options) => {
        writes.push(path);
        return inner.write(path, content, options);
      },
    });
    const table = await (recorded as StateBackend).residentTable();
    expect(table).toBe(await inner.residentTable());
    await recorded.write("/b.md", "beta\n");
    expect(writes).toEqual(["/b.md"]);
    expect(table.read("/b.md").content).toBe("beta");
  });
});
