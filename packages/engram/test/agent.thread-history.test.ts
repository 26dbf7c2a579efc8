/** Thread history: every committed step a point; the state read at a point is the state the
 * run had then (messages and files); fork and rewind; retention by count and age. The stores'
 * own operations are in the checkpointer conformance suite. */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteCheckpointer } from "@engram/sqlite";
import { describe, expect, it } from "vitest";
import {
  type Checkpoint,
  type Checkpointer,
  CompositeBackend,
  EngramError,
  FilesystemBackend,
  type HistoryPoint,
  InMemoryStore,
  StoreBackend,
  FakeChatModel,
  InMemoryCheckpointer,
  type Message,
  type ModelRequest,
  type PointState,
  createDeepAgent,
  forkThread,
  listHistory,
  readHistoryPoint,
  rewindThread,
} from "../src/index.js";
import { checkpointFiles } from "../src/agent/checkpointer.js";
import { pruneHistory } from "../src/agent/history.js";
import type { HistoryOperations } from "../src/agent/run-steps.js";
import { StateBackend } from "../src/backends/state.js";
import { core, user } from "./fixtures/session.js";

const quiet = { core, enableSubagents: false, enableMemory: false, enableSkills: false, durability: "step" } as const;

/** A digest of every file of a State backend: paths and contents. */
async function filesHash(state: StateBackend): Promise<string> {
  const found = await state.glob("**/*", { path: "/" });
  const paths = (found.files ?? []).map((f) => f.path).sort();
  const h = createHash("sha256");
  for (const path of paths) {
    const read = await state.read(path, { limit: 100_000 });
    h.update(`${path}\u0000${read.content ?? ""}\u0000`);
  }
  return h.digest("hex");
}

async function hashOf(bytes: Uint8Array | undefined): Promise<string> {
  return filesHash(bytes ? await StateBackend.restore(bytes, { core }) : new StateBackend({ core }));
}

/**
 * A model that, for each user message "work N", writes N notes one turn at a time (a file per
 * turn, named by the message count so each run writes new ones), then answers "done". Every
 * request is recorded with the thread's files as the run had them then.
 */
function recordingModel(seen: { messages: Message[]; files: string }[], state: () => StateBackend | undefined) {
  return new FakeChatModel(async (req: ModelRequest) => {
    const messages = req.messages;
    const s = state();
    seen.push({ messages: structuredClone(messages), files: s ? await filesHash(s) : "" });
    const lastUser = [...messages].reverse().find((m) => m.role === "user");
    const want = Number(String(lastUser?.content ?? "").split(" ")[1] ?? 0);
    const since = messages.length - messages.lastIndexOf(lastUser as Message) - 1;
    const done = Math.floor(since / 2);
    if (done >= want) return "done";
    return {
      toolCalls: [
        {
          id: `w${messages.length}`,
          name: "write_file",
          args: { file_path: `/notes/${messages.length}.md`, content: `n${messages.length}` },
        },
      ],
    };
  });
}

const dir = mkdtempSync(join(tmpdir(), "engram-history-"));
let files = 0;

/** The checkpointers the flows run on: in memory, and SQLite on a real file. */
const kinds: [string, () => Checkpointer & HistoryOperations][] = [
  ["in memory", () => new InMemoryCheckpointer({ core })],
  ["SQLite (a file)", () => new SqliteCheckpointer({ path: join(dir, `h${files++}.db`) })],
];

function setupOn(make: (typeof kinds)[number][1], options: { history?: false | { maxPoints?: number; maxAgeMs?: number } } = {}) {
  const checkpointer = make();
  const seen: { messages: Message[]; files: string }[] = [];
  let current: StateBackend | undefined;
  const agent = createDeepAgent(
    recordingModel(seen, () => current),
    {
      ...quiet,
      checkpointer,
      backend: (ctx) => {
        current = ctx.state;
        return ctx.state;
      },
      ...(options.history !== undefined && { history: options.history }),
    },
  );
  return { checkpointer, seen, agent };
}

/** A point's messages as the model sees them once its tool phase closes: the results so far
 * after the calls (a point after the last result of a phase is the next request's thread). */
function closed(state: PointState): Message[] {
  const open = state.data["engram.openTools"] as { done: Record<string, Message> } | undefined;
  const calls = state.messages.at(-1)?.toolCalls ?? [];
  const results = calls.map((c) => open?.done[c.id]).filter((m): m is Message => m !== undefined);
  return [...state.messages, ...results];
}

/** Each model request's thread (messages and files) is some point's state: the run had it then. */
async function expectPointsMatch(checkpointer: Checkpointer, threadId: string, seen: { messages: Message[]; files: string }[]) {
  const points = await listHistory(checkpointer, threadId);
  const states = await Promise.all(points.map((p) => readHistoryPoint(checkpointer, threadId, p.id, core)));
  for (const request of seen) {
    const at = states.filter((s) => closed(s).length === request.messages.length).at(-1);
    expect(at, `a point with ${request.messages.length} messages`).toBeDefined();
    expect(closed(at as PointState)).toEqual(request.messages);
    expect(await hashOf(at?.files)).toBe(request.files);
  }
}

for (const [label, make] of kinds)
  describe(`thread history (${label})`, () => {
    const setup = (options?: Parameters<typeof setupOn>[1]) => setupOn(make, options);
    it("reads at each point the messages and files the run had then, across runs", async () => {
      const { checkpointer, seen, agent } = setup();
      await agent.invoke(user("work 3"), { threadId: "h" });
      await agent.invoke(user("work 2"), { threadId: "h" });
      expect(seen.length).toBe(4 + 3);
      await expectPointsMatch(checkpointer, "h", seen);
      const points = await listHistory(checkpointer, "h");
      // The user's message, per turn a point, per call two (started, result): 1 + 4 + 3×2, then 1 + 3 + 2×2.
      expect(points.length).toBe(11 + 8);
      expect(points.map((p) => p.kind).slice(0, 5)).toEqual(["state", "turn", "call", "result", "turn"]);
      // Oldest first; the last is the saved thread, and equals it.
      expect(points.filter((p) => p.current).map((p) => p.id)).toEqual([points.at(-1)?.id]);
      const saved = await checkpointer.get("h");
      const last = await readHistoryPoint(checkpointer, "h", points.at(-1)?.id as string, core);
      expect(last.messages).toEqual(saved?.messages);
      // The second run's points follow the first's: only its first step was written against it.
      const runs = [...new Set(points.map((p) => p.runId))];
      expect(runs.length).toBe(2);
      // Unknown or malformed points are typed errors.
      await expect(readHistoryPoint(checkpointer, "h", "run-x:1", core)).rejects.toMatchObject({ code: "invalid_argument" });
      await expect(readHistoryPoint(checkpointer, "h", "nope", core)).rejects.toMatchObject({ code: "invalid_argument" });
    });

    it("forks a new thread from a point, which runs on from it", async () => {
      const { checkpointer, seen, agent } = setup();
      await agent.invoke(user("work 3"), { threadId: "src" });
      const points = await listHistory(checkpointer, "src");
      const middle = points.filter((p) => p.kind === "result")[1];
      const at = await readHistoryPoint(checkpointer, "src", middle?.id as string, core);
      await forkThread(checkpointer, "src", middle?.id as string, "fork", core);
      const fork = await checkpointer.get("fork");
      expect(fork?.messages).toEqual(at.messages);
      expect(await hashOf(fork?.files)).toBe(await hashOf(at.files));
      // A fork onto an existing thread is a conflict and changes nothing.
      await expect(forkThread(checkpointer, "src", middle?.id as string, "src", core)).rejects.toMatchObject({ code: "conflict" });
      expect((await checkpointer.get("src"))?.messages.length).toBe(points.at(-1)?.messages);
      // The fork runs on from the point: the model sees its messages; the source is unchanged.
      seen.length = 0;
      await agent.invoke(user("work 1"), { threadId: "fork" });
      expect(seen[0]?.messages.slice(0, at.messages.length)).toEqual(at.messages);
      expect(seen[0]?.files).toBe(await hashOf(at.files));
      await expectPointsMatch(checkpointer, "fork", seen);
      expect((await listHistory(checkpointer, "src")).length).toBe(points.length);
    });

    it("rewinds a thread to a point: messages and files; the next run starts there; refused while a run holds it", async () => {
      const { checkpointer, seen, agent } = setup();
      await agent.invoke(user("work 3"), { threadId: "r" });
      const points = await listHistory(checkpointer, "r");
      const first = points.filter((p) => p.kind === "result")[0];
      const at = await readHistoryPoint(checkpointer, "r", first?.id as string, core);
      // While a run holds the thread, a rewind is a conflict and changes nothing.
      const claim = await checkpointer.claimThread("r");
      const before = await checkpointer.get("r");
      await expect(rewindThread(checkpointer, "r", first?.id as string, core)).rejects.toMatchObject({ code: "conflict" });
      expect(await checkpointer.get("r")).toEqual(before);
      await claim.release();
      const result = await rewindThread(checkpointer, "r", first?.id as string, core);
      expect(result).toMatchObject({ point: first?.id, messagesBefore: before?.messages.length, messagesAfter: at.messages.length });
      const back = await checkpointer.get("r");
      expect(back?.messages).toEqual(at.messages);
      expect(await hashOf(back?.files)).toBe(await hashOf(at.files));
      // The rewound-over points stay (a rewind can be undone); the rewound point is current.
      const after = await listHistory(checkpointer, "r");
      expect(after.length).toBe(points.length);
      expect(after.find((p) => p.current)?.id).toBe(first?.id);
      // The next run starts from the point (the agent's loaded copy of the files is not reused).
      seen.length = 0;
      await agent.invoke(user("work 1"), { threadId: "r" });
      expect(seen[0]?.messages.slice(0, at.messages.length)).toEqual(at.messages);
      expect(seen[0]?.files).toBe(await hashOf(at.files));
      await expectPointsMatch(checkpointer, "r", seen);
      // Undo: rewind to the newest point of the abandoned branch.
      await rewindThread(checkpointer, "r", points.at(-1)?.id as string, core);
      expect((await checkpointer.get("r"))?.messages).toEqual(before?.messages);
    });

    it("keeps the newest maxPoints points, every one readable, and bases so that older ones can go", async () => {
      const { checkpointer, seen, agent } = setup({ history: { maxPoints: 5 } });
      for (let i = 0; i < 6; i++) await agent.invoke(user("work 2"), { threadId: "k" });
      const points = await listHistory(checkpointer, "k", { retention: { maxPoints: 5 } });
      expect(points.length).toBe(5);
      for (const p of points) await readHistoryPoint(checkpointer, "k", p.id, core);
      expect(points.at(-1)?.current).toBe(true);
      // Stored: the listed points and what they follow back to a base, bounded by maxPoints and a run.
      const stored = await checkpointer.getHistory("k");
      expect(stored.length).toBeLessThanOrEqual(5 + 7);
      // The requests of the last run are points still listed.
      await expectPointsMatch(checkpointer, "k", seen.slice(-2));
      // The latest state is the thread's.
      expect((await checkpointer.get("k"))?.messages.length).toBe(6 * 6);
    });

    it("drops points older than maxAgeMs, never the saved state, which later runs extend", async () => {
      const { checkpointer, agent } = setup();
      await agent.invoke(user("work 2"), { threadId: "a" });
      // A branch the thread left: rewound to its second point, then run on.
      const first = await listHistory(checkpointer, "a");
      await rewindThread(checkpointer, "a", first[1]?.id as string, core);
      await agent.invoke(user("work 1"), { threadId: "a" });
      const all = await checkpointer.getHistory("a");
      const head = (await checkpointer.get("a"))?.history;
      // Young enough: nothing goes.
      expect(await pruneHistory(checkpointer, "a", { maxAgeMs: 60_000 }, head)).toBe(0);
      const later = Date.now() + 60_000;
      const dropped = await pruneHistory(checkpointer, "a", { maxAgeMs: 1000 }, head, later);
      // The left branch went; the saved state's point and what it follows stayed.
      expect(dropped).toBe(first.length - 2);
      expect((await checkpointer.getHistory("a")).length).toBe(all.length - dropped);
      expect(await listHistory(checkpointer, "a", { retention: { maxAgeMs: 1000 }, now: later })).toEqual([]);
      // The saved state's point stays readable (and with it what it follows), so the next run extends it.
      const kept = await checkpointer.getHistory("a");
      expect(kept.map((s) => `${s.runId}:${s.seq}`)).toContain(`${head?.runId}:${head?.seq}`);
      const saved = await checkpointer.get("a");
      expect((await readHistoryPoint(checkpointer, "a", `${head?.runId}:${head?.seq}`, core)).messages).toEqual(saved?.messages);
      await agent.invoke(user("work 1"), { threadId: "a" });
      expect((await listHistory(checkpointer, "a")).length).toBeGreaterThan(3);
    });

    it("keeps no history with history: false, and says unsupported for a checkpointer without it", async () => {
      const { checkpointer, agent } = setup({ history: false });
      await agent.invoke(user("work 1"), { threadId: "n" });
      expect(await checkpointer.getHistory("n")).toEqual([]);
      const plain = new InMemoryCheckpointer({ core });
      const bare: Checkpointer = { get: (id) => plain.get(id), put: (id, cp) => plain.put(id, cp), delete: (id) => plain.delete(id) };
      const refused = await listHistory(bare, "n").catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(EngramError);
      expect(refused).toMatchObject({ code: "unsupported" });
      await expect(rewindThread(bare, "n", "run-1:1", core)).rejects.toMatchObject({ code: "unsupported" });
      expect(() => createDeepAgent(new FakeChatModel(() => "x"), { ...quiet, checkpointer, history: { maxPoints: 0 } })).toThrow(/history/);
    });
  });

/** A State file of a saved thread, or `undefined`. */
async function stateFile(saved: Checkpoint | undefined, path: string): Promise<string | undefined> {
  const bytes = saved && checkpointFiles(saved, core);
  if (!bytes) return undefined;
  const read = await (await StateBackend.restore(bytes, { core })).read(path);
  return read.error ? undefined : read.content;
}

describe("rewinding files outside the thread (a directory, a store)", () => {
  /** A thread whose run writes a directory's files (one there before), a store's file and a State file. */
  async function written() {
    const dir = mkdtempSync(join(tmpdir(), "engram-rewind-"));
    writeFileSync(join(dir, "a.md"), "original");
    const fs = new FilesystemBackend({ rootDir: dir });
    const store = new InMemoryStore();
    const kept = new StoreBackend({ store, namespace: ["kept"] });
    const checkpointer = new InMemoryCheckpointer({ core });
    const backendOf = (state: StateBackend) => new CompositeBackend(state, { "/project/": fs, "/kept/": kept });
    const writes = [
      ["/project/a.md", "v1"],
      ["/project/b.md", "new"],
      ["/kept/c.md", "c1"],
      ["/notes.md", "state"],
      ["/project/a.md", "v2"],
    ];
    const model = new FakeChatModel(async (req) => {
      const done = req.messages.filter((m) => m.role === "tool").length;
      const next = writes[done];
      if (!next) return "done";
      return { toolCalls: [{ id: `w${done}`, name: "write_file", args: { file_path: next[0], content: next[1] } }] };
    });
    const agent = createDeepAgent(model, { ...quiet, checkpointer, backend: (ctx) => backendOf(ctx.state) });
    await agent.invoke(user("write them"), { threadId: "t" });
    const points = await listHistory(checkpointer, "t");
    const read = (name: string) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), "utf8") : undefined);
    return { dir, store, kept, checkpointer, points, read, backend: backendOf(new StateBackend({ core })) };
  }

  it("puts back what the run's writes replaced, and the State files with the messages", async () => {
    const { checkpointer, points, read, kept, backend } = await written();
    expect(read("a.md")).toBe("v2");
    // After the first write's result: a.md was v1 then, b.md and c.md did not exist.
    const afterFirst = points.find((p) => p.kind === "result") as HistoryPoint;
    const savedBefore = await checkpointer.get("t");
    const result = await rewindThread(checkpointer, "t", afterFirst.id, core, { backend });
    expect(result.filesRestored.sort()).toEqual(["/kept/c.md", "/project/a.md", "/project/b.md"]);
    expect(read("a.md")).toBe("v1");
    expect(read("b.md")).toBeUndefined();
    expect((await kept.read("/c.md")).error?.code).toBe("file_not_found");
    const saved = await checkpointer.get("t");
    expect(saved?.messages).toEqual((await readHistoryPoint(checkpointer, "t", afterFirst.id, core)).messages);
    // The State file written later is gone with the snapshot.
    expect(await stateFile(savedBefore, "/notes.md")).toBe("state");
    expect(await stateFile(saved, "/notes.md")).toBeUndefined();
    // To the start: a.md as it was before the run.
    await rewindThread(checkpointer, "t", points[0]?.id as string, core, { backend });
    expect(read("a.md")).toBe("original");
  });

  it("refuses with conflict, naming the file and changing nothing, when someone changed a file since", async () => {
    for (const change of ["directory", "store"] as const) {
      const { dir, store, checkpointer, points, read, kept, backend } = await written();
      if (change === "directory") writeFileSync(join(dir, "b.md"), "someone else's");
      else await store.put(["kept"], "/c.md", { content: ["someone"], created_at: "x", modified_at: "x" });
      const keptBefore = await kept.readBytes("/c.md");
      const before = await checkpointer.get("t");
      const refused = await rewindThread(checkpointer, "t", points[0]?.id as string, core, { backend }).catch((e: unknown) => e);
      expect(refused).toMatchObject({ name: "EngramError", code: "conflict" });
      expect(String((refused as Error).message)).toContain(change === "directory" ? "/project/b.md" : "/kept/c.md");
      // All or nothing: no file was written, the thread is as it was.
      expect(read("a.md")).toBe("v2");
      expect(read("b.md")).toBe(change === "directory" ? "someone else's" : "new");
      expect(await kept.readBytes("/c.md")).toEqual(keptBefore);
      expect(await checkpointer.get("t")).toEqual(before);
    }
  });

  it("needs the thread's backend when its steps wrote files outside it", async () => {
    const { checkpointer, points, read } = await written();
    await expect(rewindThread(checkpointer, "t", points[0]?.id as string, core)).rejects.toMatchObject({ code: "invalid_argument" });
    expect(read("a.md")).toBe("v2");
    // The last point needs nothing undone.
    await rewindThread(checkpointer, "t", points.at(-1)?.id as string, core);
  });
});
