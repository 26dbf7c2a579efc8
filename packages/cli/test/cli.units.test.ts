/** The pure parts of the command: colour decisions and the exit code of every stop reason. */
import { describe, expect, it } from "vitest";
import { EXIT, exitCodeFor } from "../src/exit.js";
import { colorsFor } from "../src/terminal.js";

describe("colours", () => {
  const tty = { write: () => true, isTTY: true };
  const pipe = { write: () => true, isTTY: false };
  it("are on for a terminal, off for NO_COLOR, --no-color, TERM=dumb and pipes", () => {
    expect(colorsFor(tty, { env: {} }).isColorSupported).toBe(true);
    expect(colorsFor(tty, { env: {} }).red("x")).not.toBe("x");
    expect(colorsFor(tty, { env: { NO_COLOR: "1" } }).red("x")).toBe("x");
    expect(colorsFor(tty, { env: {}, color: false }).red("x")).toBe("x");
    expect(colorsFor(tty, { env: { TERM: "dumb" } }).red("x")).toBe("x");
    expect(colorsFor(pipe, { env: {} }).red("x")).toBe("x");
  });
});

describe("exit codes", () => {
  it("differ for every way a run ends", () => {
    const reasons = ["done", "max_turns", "max_model_calls", "interrupted", "truncated", "cancelled", "error"] as const;
    const codes = reasons.map(exitCodeFor);
    expect(codes).toEqual([0, 3, 4, 5, 6, 130, 1]);
    expect(new Set([...codes, EXIT.usage]).size).toBe(reasons.length + 1);
  });
});
