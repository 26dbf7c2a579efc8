/** The error family: `EngramError.hasCode` recognises errors from another copy of the package. */
import { describe, expect, it } from "vitest";
import { EngramError as BuiltEngramError, ResumeError as BuiltResumeError } from "../dist/errors.js";
import { EngramError, ResumeError } from "../src/errors.js";

describe("EngramError.hasCode", () => {
  it("recognises the family by its mark, also from another copy of the package", () => {
    // The built package is a second copy: `instanceof` misses its errors, `hasCode` does not.
    const other = new BuiltEngramError("conflict", "saved meanwhile");
    expect(other instanceof EngramError).toBe(false);
    expect(EngramError.hasCode(other, "conflict")).toBe(true);
    expect(EngramError.hasCode(new BuiltResumeError("taken"), "invalid_resume")).toBe(true);
    expect(EngramError.hasCode(new ResumeError("taken"), "invalid_resume")).toBe(true);
    expect(EngramError.hasCode(new EngramError("conflict", "x"), "store_error")).toBe(false);
    // Not the family: same code, no mark.
    expect(EngramError.hasCode(Object.assign(new Error("x"), { code: "conflict" }), "conflict")).toBe(false);
    for (const v of [undefined, null, "conflict", { code: "conflict" }]) expect(EngramError.hasCode(v, "conflict")).toBe(false);
  });
});
