/** `wrapBackend`: overrides replace methods; everything else reaches the backend itself. */
import { describe, expect, it } from "vitest";
import { wrapBackend } from "../src/backends/wrap.js";
import { type Backend, StateBackend } from "../src/index.js";

describe("wrapBackend", () => {
  it("forwards methods bound to the backend (private fields work), once per function, and uses the overrides", async () => {
    const state = new StateBackend();
    const writes: string[] = [];
    const wrapped = wrapBackend(state, {
      write: (path, content, options) => {
        writes.push(path);
        return state.write(path, content, options);
      },
    });
    expect((await wrapped.write("/a.md", "one\n")).error).toBeUndefined();
    expect(writes).toEqual(["/a.md"]);
    expect((await wrapped.read("/a.md")).content).toBe("one");
    const { read } = wrapped; // detached: still bound to the backend
    expect((await read("/a.md")).content).toBe("one");
    expect(wrapped.read).toBe(wrapped.read);
    expect(wrapped.snapshot).toBe(wrapped.snapshot);
    // A method replaced on the backend later is the one forwarded.
    const own = state as unknown as { stat: Backend["stat"] };
    own.stat = async () => ({ error: { code: "file_not_found", message: "replaced" } });
    expect((await wrapped.stat("/a.md")).error?.message).toBe("replaced");
  });
});
