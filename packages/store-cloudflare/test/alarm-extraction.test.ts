import { describe, expect, it } from "vitest";
import { AlarmExtraction } from "../src/alarm-extraction.js";

/** A Durable Object's alarm slot. */
function alarmStorage(at: number | null = null) {
  const storage = {
    at,
    getAlarm: async () => storage.at,
    setAlarm: async (t: number | Date) => {
      storage.at = Number(t);
    },
  };
  return storage;
}

/** Long-term memory whose pending work is `pending` (after a flush: `afterFlush`). */
function memory(pending: number, afterFlush = pending) {
  const calls: string[] = [];
  let left = pending;
  return {
    calls,
    close: async (o?: { timeoutMs?: number }) => void calls.push(`close ${o?.timeoutMs}`),
    flush: async () => {
      calls.push("flush");
      left = afterFlush;
    },
    pendingWork: async () => Array.from({ length: left }) as never[],
  };
}

describe("AlarmExtraction", () => {
  it("defers: closes memory without extracting and sets the alarm only when work is pending", async () => {
    const storage = alarmStorage();
    const extraction = new AlarmExtraction(storage, { delayMs: 5000 });
    const idle = memory(0);
    await extraction.defer(idle);
    expect(idle.calls).toEqual(["close 0"]);
    expect(storage.at).toBe(null);
    const before = Date.now();
    await extraction.defer(memory(1));
    expect(storage.at).toBeGreaterThanOrEqual(before + 5000);
  });

  it("keeps a sooner alarm", async () => {
    const storage = alarmStorage(1);
    await new AlarmExtraction(storage).defer(memory(1));
    expect(storage.at).toBe(1);
  });

  it("runs: extracts, closes, and sets the alarm again retryMs later only when work is left", async () => {
    const storage = alarmStorage();
    const extraction = new AlarmExtraction(storage, { retryMs: 7000 });
    const done = memory(2, 0);
    await extraction.run(done);
    expect(done.calls).toEqual(["flush", "close 0"]);
    expect(storage.at).toBe(null);
    const before = Date.now();
    await extraction.run(memory(2, 1));
    expect(storage.at).toBeGreaterThanOrEqual(before + 7000);
  });

  it("rejects what is not a Durable Object's storage, and bad delays, with invalid_argument", () => {
    expect(() => new AlarmExtraction({} as never)).toThrow(expect.objectContaining({ code: "invalid_argument" }));
    expect(() => new AlarmExtraction(alarmStorage(), { delayMs: -1 })).toThrow(expect.objectContaining({ code: "invalid_argument" }));
    expect(() => new AlarmExtraction(alarmStorage(), { retryMs: Number.NaN })).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
  });
});
