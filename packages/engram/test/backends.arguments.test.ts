/**
 * The backend contract's two kinds of errors, in every backend: an argument of the wrong type
 * (a program's mistake) rejects with an `invalid_argument` EngramError and changes nothing; what
 * goes wrong with a path (here: longer than a store key may be) is `{ error }` data from every
 * method alike. A CompositeBackend refuses a route that is not a backend when it is made.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { type Backend, CompositeBackend, type Core, EngramError, StateBackend, loadCore } from "../src/index.js";
import { backendFactories } from "./fixtures/backends.js";

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

/** Calls with an argument of the wrong type (on a file that exists, `e.md` under the backend's
 * root, where one is needed). */
const wrong: [string, (b: Backend, root: string) => Promise<unknown>][] = [
  ["write content 123", (b, r) => b.write(`${r}/new.md`, 123 as never)],
  ["write content null", (b, r) => b.write(`${r}/new.md`, null as never)],
  ["write content {}", (b, r) => b.write(`${r}/new.md`, {} as never)],
  ["write path 123", (b) => b.write(123 as never, "x")],
  ["edit oldString 1", (b, r) => b.edit(`${r}/e.md`, 1 as never, "x")],
  ["edit newString null", (b, r) => b.edit(`${r}/e.md`, "a", null as never)],
  ["glob pattern 123", (b) => b.glob(123 as never)],
  ["glob pattern null", (b, r) => b.glob(null as never, { path: r || "/" })],
  ["grep pattern 123", (b) => b.grep(123 as never)],
  ["read path 123", (b) => b.read(123 as never)],
  ["readBytes path null", (b) => b.readBytes(null as never)],
  ["stat path undefined", (b) => b.stat(undefined as never)],
  ["delete path 42", (b) => b.delete(42 as never)],
  ["ls path {}", (b) => b.ls({} as never)],
];

describe.each(backendFactories)("$name", (factory) => {
  it.each(wrong)("%s rejects with invalid_argument and changes nothing", async (_, call) => {
    const b = await factory.create(core);
    const root = factory.root;
    await b.write(`${root}/e.md`, "a\n");
    let thrown: unknown;
    await call(b, root).catch((e: unknown) => {
      thrown = e;
    });
    expect(thrown).toBeInstanceOf(EngramError);
    expect((thrown as EngramError).code).toBe("invalid_argument");
    expect((await b.read(`${root}/e.md`)).content).toBe("a");
    expect((await b.stat(`${root}/new.md`)).error?.code).toBe("file_not_found");
  });
});

describe.each(backendFactories.filter((f) => f.name.includes("StoreBackend")))("$name: a path longer than a store key", (factory) => {
  // 1,500 bytes: a valid path (the core takes up to 4,095), too long for a store key (1,024).
  const long = `${factory.root}/${"x".repeat(1500)}.md`;
  const calls: [string, (b: Backend) => Promise<{ error?: { code: string } }>][] = [
    ["write", (b) => b.write(long, "x")],
    ["read", (b) => b.read(long)],
    ["readBytes", (b) => b.readBytes(long)],
    ["edit", (b) => b.edit(long, "a", "b")],
    ["stat", (b) => b.stat(long)],
    ["delete", (b) => b.delete(long)],
    ["ls", (b) => b.ls(long)],
    ["glob", (b) => b.glob("*", { path: long })],
    ["grep", (b) => b.grep("x", { path: long })],
  ];
  it.each(calls)("%s answers invalid_path as data", async (_, call) => {
    expect((await call(await factory.create(core))).error?.code).toBe("invalid_path");
  });
});

describe("CompositeBackend construction", () => {
  const state = () => new StateBackend({ core });
  const cases: [string, () => unknown][] = [
    ["a route that is an empty object", () => new CompositeBackend(state(), { "/m/": {} as Backend })],
    ["a route that is a string", () => new CompositeBackend(state(), { "/m/": "store" as never })],
    ["a route missing methods", () => new CompositeBackend(state(), { "/m/": { read: () => undefined } as never })],
    ["a default backend that is null", () => new CompositeBackend(null as never, {})],
    ["routes that are null", () => new CompositeBackend(state(), null as never)],
  ];
  it.each(cases)("%s throws invalid_argument", (_, make) => {
    expect(make).toThrow(EngramError);
    try {
      make();
    } catch (e) {
      expect((e as EngramError).code).toBe("invalid_argument");
    }
  });
});
