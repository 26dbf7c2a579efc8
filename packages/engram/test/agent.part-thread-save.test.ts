/** A run's saves on their own (`agent/thread-save.ts`): each compares against the revision the
 * one before left, carries the run's user and interrupt, and a save another run made since is a
 * `conflict` that names the thread (nothing overwritten). */
import { describe, expect, it } from "vitest";
import { InMemoryCheckpointer } from "../src/agent/checkpointer.js";
import type { LevelState } from "../src/agent/runtime.js";
import { type SaveTarget, ThreadSaves } from "../src/agent/thread-save.js";
import { EngramError } from "../src/errors.js";
import { core } from "./fixtures/session.js";

const target = (checkpointer: InMemoryCheckpointer): SaveTarget => ({
  checkpointer,
  threadId: "t",
  userId: "u1",
  files: undefined,
  ownFiles: false,
  backendOwners: new WeakMap(),
  events: { push: () => undefined },
});

const state = (...contents: string[]): LevelState => ({ messages: contents.map((content) => ({ role: "user", content })), data: {} });

describe("thread saves", () => {
  it("save after save, each on the revision the one before left, with the run's user and interrupt", async () => {
    const checkpointer = new InMemoryCheckpointer({ core });
    const saves = new ThreadSaves(target(checkpointer), 0);
    await saves.save(state("one"));
    const first = saves.revision;
    expect(first).toBeGreaterThan(0);
    const interrupt = { toolCalls: [{ id: "c", name: "write_file", args: {}, allow: ["approve" as const] }] };
    await saves.save({ ...state("one", "two"), interrupt });
    expect(saves.revision).toBeGreaterThan(first as number);
    const stored = await checkpointer.get("t");
    expect(stored?.messages.map((m) => m.content)).toEqual(["one", "two"]);
    expect(stored?.userId).toBe("u1");
    expect(stored?.interrupt).toEqual(interrupt);
    expect(stored?.revision).toBe(saves.revision);
  });

  it("refuses to overwrite a save another run made since this one loaded the thread", async () => {
    const checkpointer = new InMemoryCheckpointer({ core });
    const mine = new ThreadSaves(target(checkpointer), 0);
    const theirs = new ThreadSaves(target(checkpointer), 0);
    await theirs.save(state("theirs"));
    const err = await mine.save(state("mine")).catch((e: unknown) => e);
    expect(EngramError.hasCode(err, "conflict")).toBe(true);
    expect((err as Error).message).toMatch(/^thread 't' was saved by another run while this one was under way/);
    expect((await checkpointer.get("t"))?.messages.map((m) => m.content)).toEqual(["theirs"]);
    expect(mine.revision).toBe(0);
  });
});
