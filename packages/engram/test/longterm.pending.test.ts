/** Pending long-term-memory work (a conversation whose extraction keeps failing) holds no secret
 * wherever it is kept: the pending files, a store namespace, a real SQLite `engram.db` — on every
 * path that keeps work pending (unusable replies, failed model calls, failed storage). */
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "@engram/sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeChatModel } from "../src/models/fake.js";
import type { Message } from "../src/models/types.js";
import { InMemoryStore } from "../src/stores/memory.js";
import { LongTermMemory, type LongTermMemoryOptions, type MemoryStorage, StoreMemoryStorage } from "../src/memory/longterm/index.js";
import { FileMemoryStorage } from "../src/memory/longterm/node.js";

const KEY = "sk-proj-Zx9Qw8Er7Ty6Ui5Op4As3Df2";
const PASSWORD = "Tr0ub4dor-staging-9931";
const conversation: Message[] = [
  { role: "user", content: `I live in Lyon. My API key is ${KEY} and my password is ${PASSWORD}.` },
  { role: "assistant", content: `Noted: key ${KEY}.` },
];

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "engram-ltm-pending-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Captures the conversation with a model that never gives a usable update, and closes. */
async function failExtraction(options: Partial<LongTermMemoryOptions>, reply: () => string | Promise<string> = () => "I cannot do that.") {
  const warnings: string[] = [];
  const memory = new LongTermMemory({
    model: new FakeChatModel(reply),
    debounceMs: 0,
    retryBackoffMs: 0,
    extractionAttempts: 1,
    onWarning: (m) => warnings.push(m),
    ...options,
  });
  memory.capture(conversation, { threadId: "t", userId: "u" });
  await memory.close();
  const pending = await memory.pendingWork();
  expect(pending, warnings.join("\n")).toHaveLength(1);
  return { pending, warnings };
}

/** Every byte of every file under `root`, as text. */
async function rawFiles(root: string): Promise<string> {
  const names = await readdir(root, { recursive: true, withFileTypes: true });
  const files = names.filter((d) => d.isFile()).map((d) => join(d.parentPath, d.name));
  return (await Promise.all(files.map((f) => readFile(f, "latin1")))).join("\n");
}

function expectNoSecret(raw: string): void {
  expect(raw).not.toContain(KEY.slice(3));
  expect(raw).not.toContain(PASSWORD);
  expect(raw).toContain("I live in Lyon"); // the rest of the conversation is kept
  expect(raw).toContain("[REDACTED]");
}

describe("pending work holds no secret", () => {
  it("in the pending files of FileMemoryStorage", async () => {
    const { pending, warnings } = await failExtraction({ storage: new FileMemoryStorage({ dir }) });
    const raw = await rawFiles(join(dir, "pending"));
    expect(raw).toContain(pending[0]?.id);
    expectNoSecret(raw);
    expectNoSecret(JSON.stringify(pending));
    expect(warnings.join("\n")).not.toContain(KEY.slice(3));
  });

  it("in the store namespace engram/longterm/pending, on a real SQLite engram.db", async () => {
    const path = join(dir, "engram.db");
    const store = new SqliteStore({ path });
    try {
      await failExtraction({ storage: new StoreMemoryStorage({ store }) });
      const rows = store.database.prepare("SELECT ns, value FROM engram_items").all() as { ns: string; value: string }[];
      const pendingRows = rows.filter((r) => r.ns.includes("pending"));
      expect(pendingRows).toHaveLength(1);
      expectNoSecret(pendingRows.map((r) => r.value).join("\n"));
    } finally {
      store.database.close();
    }
    // The database file and its write-ahead log, byte by byte.
    expectNoSecret(await rawFiles(dir));
  });

  it("when the model call fails with an error that echoes the key (the reason is kept too)", async () => {
    const store = new InMemoryStore();
    const { pending } = await failExtraction({ store }, () => Promise.reject(new Error(`401 Unauthorized: invalid key ${KEY}`)));
    expect(pending[0]?.reason).toMatch(/the model call failed/);
    const { items } = await store.list(["engram", "longterm", "pending"]);
    expectNoSecret(JSON.stringify(items));
  });

  it("when close() stops before extraction and keeps the capture for next time", async () => {
    const store = new InMemoryStore();
    const memory = new LongTermMemory({ model: new FakeChatModel([]), store, debounceMs: 300_000, onWarning: () => {} });
    memory.capture(conversation, { threadId: "t", userId: "u" });
    await memory.close({ timeoutMs: 0 });
    const { items } = await store.list(["engram", "longterm", "pending"]);
    expect(items).toHaveLength(1);
    expectNoSecret(JSON.stringify(items));
  });

  it("when saving memory fails and the whole job is kept", async () => {
    const inner = new StoreMemoryStorage({ store: new InMemoryStore() });
    const broken: MemoryStorage = {
      load: (u, a) => inner.load(u, a),
      save: () => Promise.reject(new Error("disk full")),
      clear: (u, a) => inner.clear(u, a),
    };
    const store = new InMemoryStore();
    const reply = JSON.stringify({ newFacts: [{ content: "Lives in Lyon", category: "context", confidence: 0.9 }], factsToRemove: [] });
    const { pending } = await failExtraction({ storage: broken, store }, () => reply);
    expect(pending[0]?.reason).toMatch(/storage failed/);
    const { items } = await store.list(["engram", "longterm", "pending"]);
    expectNoSecret(JSON.stringify(items));
  });
});
