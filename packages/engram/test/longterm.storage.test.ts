/** Long-term memory storage: FileMemoryStorage (layout, safe ids, compare-and-swap, mtime cache,
 * quarantine, stale locks, real concurrent processes) and StoreMemoryStorage. */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InMemoryStore } from "../src/stores/memory.js";
import {
  type MemoryData,
  type MemoryStorage,
  NO_REVISION,
  StoreMemoryStorage,
  createEmptyMemory,
  safeId,
} from "../src/memory/longterm/index.js";
import { FileMemoryStorage } from "../src/memory/longterm/node.js";
import { bundledFixture } from "./fixtures/node-bundle.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "engram-ltm-store-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function withFact(memory: MemoryData, content: string): MemoryData {
  const next = structuredClone(memory);
  next.facts.push({
    id: `fact_${(next.facts.length + 1).toString(16).padStart(8, "0")}`,
    content,
    category: "context",
    confidence: 0.9,
    createdAt: "2026-01-01T00:00:00.000Z",
    source: "manual",
  });
  return next;
}

/** Exercises the compare-and-swap contract every storage must meet. */
async function casContract(storage: MemoryStorage) {
  const empty = await storage.load("u1");
  expect(empty).toEqual({ memory: createEmptyMemory(), revision: NO_REVISION });
  const first = withFact(empty.memory, "one");
  const saved = await storage.save("u1", undefined, first, NO_REVISION);
  expect(saved.ok).toBe(true);
  expect(first.lastUpdated).toBe(""); // the caller's object is not touched
  expect(await storage.save("u1", undefined, first, NO_REVISION)).toEqual({ ok: false, conflict: true });
  const loaded = await storage.load("u1");
  expect(saved.ok && loaded.revision).toBe(saved.ok && saved.revision);
  expect(loaded.memory.facts.map((f) => f.content)).toEqual(["one"]);
  expect(loaded.memory.lastUpdated).toMatch(/Z$/);
  const second = await storage.save("u1", undefined, withFact(loaded.memory, "two"), loaded.revision);
  expect(second.ok).toBe(true);
  // A writer that loaded before the second save loses.
  expect(await storage.save("u1", undefined, withFact(loaded.memory, "lost"), loaded.revision)).toEqual({ ok: false, conflict: true });
  // Loads are private copies.
  const a = await storage.load("u1");
  a.memory.facts.length = 0;
  expect((await storage.load("u1")).memory.facts.length).toBe(2);
  // Users and agents are separate documents.
  expect((await storage.load("u2")).memory.facts).toEqual([]);
  expect((await storage.load("u1", "coder")).memory.facts).toEqual([]);
  // Clear deletes and records when.
  const before = Date.now();
  await storage.clear("u1");
  const cleared = await storage.load("u1");
  expect(cleared.memory).toEqual(createEmptyMemory());
  expect(cleared.revision).toBe(NO_REVISION);
  expect(cleared.clearedAt).toBeGreaterThanOrEqual(before);
  expect(await storage.save("u1", undefined, withFact(a.memory, "stale"), a.revision)).toEqual({ ok: false, conflict: true });
}

describe("safeId", () => {
  it("keeps plain lower-case ids and hashes everything else into a disjoint set", async () => {
    expect(await safeId("alice")).toBe("alice");
    expect(await safeId("user_42-x")).toBe("user_42-x");
    const tricky = ["../../etc", "Alice", "a/b", "", ".", "..", "con", "_abc", "-x", "a".repeat(65), "用户", "a\0b", "C:\\x"];
    const names = await Promise.all(tricky.map(safeId));
    for (const n of names) expect(n).toMatch(/^_[0-9a-f]{32}$/);
    expect(new Set(names).size).toBe(tricky.length);
    expect(await safeId("Alice")).not.toBe(await safeId("alice"));
  });
});

describe("FileMemoryStorage", () => {
  it("meets the compare-and-swap contract", async () => {
    await casContract(new FileMemoryStorage({ dir }));
  });

  it("lays files out per user and per agent, never outside its directory", async () => {
    const storage = new FileMemoryStorage({ dir });
    expect(await storage.pathFor("alice")).toBe(join(dir, "users", "alice", "memory.json"));
    expect(await storage.pathFor("alice", "coder")).toBe(join(dir, "users", "alice", "agents", "coder", "memory.json"));
    for (const id of ["../../../tmp/evil", "/etc/passwd", "..", "a/../../b"]) {
      const p = await storage.pathFor(id, id);
      const rel = relative(dir, p);
      expect(rel.startsWith("..") || rel.includes(`..${sep}`)).toBe(false);
      expect(rel.split(sep)).toHaveLength(5); // users, user, agents, agent, memory.json
    }
    await storage.save("../../x", "../y", createEmptyMemory(), NO_REVISION);
    expect(await readdir(dir)).toEqual(["users"]);
  });

  it("writes pretty JSON atomically and leaves no temp files", async () => {
    const storage = new FileMemoryStorage({ dir });
    await storage.save("u", undefined, withFact(createEmptyMemory(), "日本語 and emoji 🎉"), NO_REVISION);
    const file = await storage.pathFor("u");
    const text = await readFile(file, "utf8");
    expect(JSON.parse(text).facts[0].content).toBe("日本語 and emoji 🎉");
    expect(text).toContain('\n  "version": "1.0"');
    expect(await readdir(dirname(file))).toEqual(["memory.json"]);
  });

  it("sees a change made by another writer (mtime cache) and revisions follow the bytes", async () => {
    const storage = new FileMemoryStorage({ dir });
    const other = new FileMemoryStorage({ dir });
    await storage.save("u", undefined, withFact(createEmptyMemory(), "one"), NO_REVISION);
    const r1 = await storage.load("u");
    const r2 = await other.load("u");
    expect(r2.revision).toBe(r1.revision);
    const saved = await other.save("u", undefined, withFact(r2.memory, "two"), r2.revision);
    expect(saved.ok).toBe(true);
    const seen = await storage.load("u");
    expect(seen.memory.facts.map((f) => f.content)).toEqual(["one", "two"]);
    expect(seen.revision).toBe(saved.ok && saved.revision);
    // A hand edit is picked up too.
    const file = await storage.pathFor("u");
    const doc = JSON.parse(await readFile(file, "utf8"));
    doc.facts.pop();
    await writeFile(file, JSON.stringify(doc));
    expect((await storage.load("u")).memory.facts.map((f) => f.content)).toEqual(["one"]);
  });

  it.each([
    ["broken JSON", '{"version": "1.0", "facts": ['],
    ["a schema violation", JSON.stringify({ ...createEmptyMemory(), facts: [{ id: "f", content: 1 }] })],
    ["not UTF-8", Buffer.from([0x7b, 0xff, 0xfe, 0x7d])],
  ])("quarantines %s and starts afresh", async (_, bad) => {
    const storage = new FileMemoryStorage({ dir });
    const file = await storage.pathFor("u");
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, bad);
    const loaded = await storage.load("u");
    expect(loaded.memory).toEqual(createEmptyMemory());
    expect(loaded.revision).toBe(NO_REVISION);
    expect(loaded.warning).toMatch(/invalid.*moved to .*memory\.json\.corrupt-\d+/);
    const names = await readdir(dirname(file));
    const aside = names.find((n) => n.startsWith("memory.json.corrupt-")) as string;
    expect(names).toEqual([aside]);
    expect(await readFile(join(dirname(file), aside))).toEqual(Buffer.from(bad));
    expect((await storage.save("u", undefined, withFact(loaded.memory, "fresh"), loaded.revision)).ok).toBe(true);
    expect((await storage.load("u")).warning).toBeUndefined();
  });

  it("is not blocked by lock files of any kind: the lock is the kernel's, released when its holder dies", async () => {
    const storage = new FileMemoryStorage({ dir, lockTimeoutMs: 2000 });
    const file = await storage.pathFor("u");
    await mkdir(dirname(file), { recursive: true });
    // What older writers left behind (a dead owner, an empty file) means nothing any more.
    await writeFile(`${file}.lock`, JSON.stringify({ pid: await deadPid(), host: hostname(), token: "x", at: 0 }));
    await writeFile(`${file}.lock.break`, "");
    expect((await storage.save("u", undefined, createEmptyMemory(), NO_REVISION)).ok).toBe(true);
    const loaded = await storage.load("u");
    expect((await storage.save("u", undefined, withFact(loaded.memory, "x"), loaded.revision)).ok).toBe(true);
  });

  it("waits for a live lock and gives up with a busy error after lockTimeoutMs", async () => {
    const storage = new FileMemoryStorage({ dir, lockTimeoutMs: 150 });
    const file = await storage.pathFor("u");
    await mkdir(dirname(file), { recursive: true });
    // A live process holds the writers' lock (flock(1) on the user's directory) until killed.
    const holder = spawn("flock", ["--exclusive", dirname(file), "-c", "echo held; exec sleep 30"], {
      stdio: ["ignore", "pipe", "inherit"],
      detached: true,
    });
    await new Promise<void>((resolve) => holder.stdout.once("data", () => resolve()));
    try {
      await expect(storage.save("u", undefined, createEmptyMemory(), NO_REVISION)).rejects.toMatchObject({ code: "busy" });
    } finally {
      // SIGKILL to the holder's whole group (flock and the sleep that inherited the lock).
      const exited = new Promise((resolve) => holder.once("exit", resolve));
      process.kill(-(holder.pid as number), "SIGKILL");
      await exited;
    }
    expect((await storage.save("u", undefined, createEmptyMemory(), NO_REVISION)).ok).toBe(true);
  });

  it("two processes writing one user's memory 100 times each lose no fact", async () => {
    // Bundled once, started with plain node (not tsx) each time.
    const script = await bundledFixture(join(import.meta.dirname, "fixtures/longterm/writer.ts"));
    const run = (name: string) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(process.execPath, [script, dir, name, "100"], { env: process.env, stdio: ["ignore", "pipe", "pipe"] });
        let out = "";
        child.stdout.on("data", (d) => (out += d));
        child.stderr.on("data", (d) => (out += d));
        child.on("close", (code) => resolve({ code, out }));
      });
    const results = await Promise.all([run("A"), run("B")]);
    for (const r of results) expect(r, r.out).toMatchObject({ code: 0 });
    const memory = (await new FileMemoryStorage({ dir }).load("shared")).memory;
    const expected = ["A", "B"].flatMap((n) => Array.from({ length: 100 }, (_, i) => `fact ${n}${i}`));
    expect(memory.facts.map((f) => f.content).sort()).toEqual(expected.sort());
    expect(new Set(memory.facts.map((f) => f.id)).size).toBe(200);
    expect(await readdir(join(dir, "users", "shared"))).toEqual(["memory.json"]);
  }, 120_000);
});

describe("StoreMemoryStorage", () => {
  it("meets the compare-and-swap contract", async () => {
    await casContract(new StoreMemoryStorage({ store: new InMemoryStore() }));
  });

  it("namespaces per user and agent with safe ids", async () => {
    const store = new InMemoryStore();
    const storage = new StoreMemoryStorage({ store, namespace: ["app"] });
    await storage.save("Bob/../x", "Coder", createEmptyMemory(), NO_REVISION);
    const ns = ["app", "users", await safeId("Bob/../x"), "agents", await safeId("Coder")];
    expect((await store.get(ns, "memory"))?.value).toMatchObject({ version: "1.0" });
  });

  it("quarantines an invalid stored value and starts afresh", async () => {
    const store = new InMemoryStore();
    const storage = new StoreMemoryStorage({ store });
    const ns = ["engram", "longterm", "users", "u"];
    await store.put(ns, "memory", { facts: "nope" });
    const loaded = await storage.load("u");
    expect(loaded.memory).toEqual(createEmptyMemory());
    expect(loaded.warning).toMatch(/invalid/);
    const keys = (await store.list(ns)).items.map((i) => i.key);
    expect(keys.some((k) => k.startsWith("memory.corrupt-"))).toBe(true);
    expect((await storage.save("u", undefined, withFact(loaded.memory, "x"), loaded.revision)).ok).toBe(true);
  });
});

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((r) => child.on("exit", r));
  return child.pid as number;
}

describe("FileMemoryStorage pending work", () => {
  it("keeps pending work durably in dir/pending, through the sandboxed atomic write path", async () => {
    const storage = new FileMemoryStorage({ dir });
    const pending = storage.pendingWork?.();
    expect(pending).toBeDefined();
    const entry = {
      id: "p000000001-0123456789ab",
      job: {
        conversation: { messages: [{ role: "user" as const, content: "I live in Lyon" }], correction: false, reinforcement: false },
        threadId: "t",
        userId: "u",
        capturedAt: 1,
      },
      reason: "timeout",
      attempts: 3,
      updatedAt: 2,
    };
    await pending!.put(entry);
    // A stray file and a half-written temp are never taken for entries.
    await writeFile(join(dir, "pending", "notes.txt"), "x");
    expect((await new FileMemoryStorage({ dir }).pendingWork!().list()).map((e) => e.id)).toEqual([entry.id]);
    await pending!.delete(entry.id);
    await pending!.delete(entry.id); // already gone: fine
    expect(await pending!.list()).toEqual([]);
    await expect(pending!.delete("../escape")).rejects.toThrow();
  });
});
