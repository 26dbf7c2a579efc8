import { describe, expect, it } from "vitest";
import { BLOB_PART_BYTES, TEXT_PART_UNITS, blobParts, joinBlobs, textParts } from "../src/sql.js";

describe("parts of large values", () => {
  it("splits text without cutting a surrogate pair, and joins back to the same text", () => {
    for (const offset of [0, 1]) {
      const text = `${"a".repeat(offset)}${"😀".repeat(TEXT_PART_UNITS)}`;
      const parts = textParts(text);
      expect(parts.length).toBeGreaterThan(1);
      expect(parts.join("")).toBe(text);
      for (const p of parts) {
        expect(p.length).toBeLessThanOrEqual(TEXT_PART_UNITS);
        expect(/\p{Cs}/u.test(p)).toBe(false);
      }
    }
    expect(textParts("")).toEqual([""]);
  });

  it("splits bytes into parts of at most a mebibyte and joins them back", () => {
    const bytes = new Uint8Array(BLOB_PART_BYTES * 2 + 3).map((_, i) => i % 255);
    const parts = blobParts(bytes);
    expect(parts.map((p) => p.byteLength)).toEqual([BLOB_PART_BYTES, BLOB_PART_BYTES, 3]);
    const joined = joinBlobs(parts);
    expect(joined.length).toBe(bytes.length);
    expect(joined.every((b, i) => b === bytes[i])).toBe(true);
    expect(blobParts(new Uint8Array(0)).map((p) => p.byteLength)).toEqual([0]);
  });
});
