/** The Deno KV store and checkpointer in Deno's own runtime (the WASM core inside Deno): the
 * conformance suites in one Deno process, compare-and-swap increments from two processes on one
 * database file, and an agent's memory across a restart of the process. */
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { checkpointerConformance, storeConformance } from "../../engram/src/testing/index.js";
import { expectRemembered, expectResumed } from "../../store-cloudflare/test/fixtures/expectations.js";
import type { TestResult } from "../../store-cloudflare/test/fixtures/harness.js";
import { registeredTests } from "../../store-cloudflare/test/fixtures/host.js";
import { type ModelServer, startModelServer } from "../../store-cloudflare/test/fixtures/model-server.js";
import { type DenoProgram, bundleDenoProgram } from "./fixtures/host.js";

let program: DenoProgram;

beforeAll(async () => {
  program = await bundleDenoProgram();
});

afterAll(async () => {
  await program?.dispose();
});

it("passes the Store and Checkpointer conformance suites in Deno, and keeps what is over KV's limits in parts", async () => {
  const out = (await program.run("conformance", program.database("suite"))) as {
    store: TestResult[];
    checkpointer: TestResult[];
    limits: unknown;
  };
  expect(out.store.filter((r) => r.error)).toEqual([]);
  expect(out.store.length).toBe(registeredTests((t) => storeConformance("x", t, () => ({}) as never)));
  expect(out.checkpointer.filter((r) => r.error)).toEqual([]);
  expect(out.checkpointer.length).toBe(registeredTests((t) => checkpointerConformance("x", t, () => ({}) as never)));
  expect(out.limits).toEqual({
    sameContent: true,
    sameFiles: true,
    bigPut: true,
    sameBig: true,
    listed: true,
    batchTooLarge: "too_large",
    notKv: "invalid_argument",
    prefixes: ["other", "default"],
    longPrefix: "invalid_argument",
    swept: 0,
  });
});

it("2 Deno processes of 100 compare-and-swap increments each on one key of one database make exactly 200, every time", async () => {
  const path = program.database("counter");
  for (const round of [1, 2, 3]) {
    const key = `n${round}`;
    const runs = (await Promise.all([1, 2].map(() => program.run("increment", path, key, "100", "2")))) as { conflicts: number }[];
    expect(await program.run("get", path, key)).toBe(200);
    // The processes overlapped: some of their swaps lost and were retried.
    expect(runs.reduce((n, r) => n + r.conflicts, 0)).toBeGreaterThan(0);
  }
});

it("never shows a reader half of a value or a thread that another process is rewriting in parts", async () => {
  const path = program.database("churn");
  const [wrote, read] = (await Promise.all([program.run("churn", path, "2000"), program.run("watch", path, "10")])) as [
    { stopped: boolean },
    { seen: number[]; torn: number },
  ];
  // The writer kept rewriting until the reader was done.
  expect(wrote).toEqual({ stopped: true });
  expect(read.torn).toBe(0);
  expect(read.seen.every((n) => n >= 10)).toBe(true);
});

it("sweeps the parts a process staged before it died, short of the commit that names them", async () => {
  const path = program.database("crash");
  await expect(program.run("die-mid-put", path)).rejects.toThrow(/exited 3:/);
  await expect(program.run("die-mid-save", path)).rejects.toThrow(/exited 3:/);
  // One value's parts and one thread's files: two blobs, and nothing was committed.
  expect(await program.run("sweep", path)).toEqual({ swept: 2, value: null, thread: null, again: 0 });
});

it("holds a run's claim on a thread across processes until its process dies, with no timeout", async () => {
  const path = program.database("claims");
  const holder = program.start("hold", path, "t1");
  try {
    expect(await holder.line).toBe("held");
    expect(await program.run("claim", path, "t1")).toBe("conflict");
    expect(await program.run("claim", path, "t2")).toBe("ok");
  } finally {
    await holder.kill("SIGKILL");
  }
  // The kernel dropped the dead process's lock.
  expect(await program.run("claim", path, "t1")).toBe("ok");
});

it("resumes a run whose process was killed mid-run from the steps it committed", async () => {
  const path = program.database("durable");
  const doomed = program.start("die-mid-run", path);
  try {
    // The model turn, the tool call and its result are committed; the run then waits on the model.
    expect(await doomed.line).toBeGreaterThanOrEqual(3);
  } finally {
    await doomed.kill("SIGKILL");
  }
  const next = (await program.run("next-run", path)) as Parameters<typeof expectResumed>[0];
  expectResumed(next);
});

it("types Deno KV as Deno declares it: Deno.openKv() gives a DenoKv (deno check)", async () => {
  const types = join(import.meta.dirname, "../src/deno-kv.ts");
  await Promise.all([
    program.check(
      `import type { DenoKv, KvAtomicOperation } from ${JSON.stringify(types)};\n` +
        "const kv: DenoKv = await Deno.openKv();\nconst op: KvAtomicOperation = kv.atomic();\nexport { op };\n",
    ),
    // The check does check: what is not a database is refused.
    expect(
      program.check(`import type { DenoKv } from ${JSON.stringify(types)};\nexport const kv: DenoKv = { get() {} };\n`),
    ).rejects.toThrow(/TS2/),
  ]);
});

it("needs --unstable-kv: without it, opening the database is an invalid_config error", async () => {
  const path = program.database("flags");
  expect(await program.runWithoutKv("open", path)).toBe("invalid_config");
  expect(await program.run("open", path)).toBe("ok");
});

let model: ModelServer | undefined;
afterAll(async () => {
  await model?.close();
});

it("keeps a fact, an AGENTS.md edit and the thread across a restart: the next model request carries them", async () => {
  model = await startModelServer("D'accord.");
  const path = program.database("restart");
  const first = await program.run("remember", path, model.url, "My name is Ada.");
  expect(first).toMatchObject({
    remembered: { fact: { fact: { content: "Prefers metric units" } }, edited: { occurrences: 1 } },
    answer: "D'accord.",
  });
  const before = model.requests.length;

  expect(await program.run("ask", path, model.url, "How tall is Everest?")).toBe("D'accord.");
  expectRemembered(model.requests.slice(before).find((r) => r.stream)?.messages, "How tall is Everest?");
});
