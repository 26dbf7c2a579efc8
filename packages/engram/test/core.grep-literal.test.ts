/**
 * Literal grep finds exactly the lines holding the literal, on both cores. The WASM core scans
 * 64 candidate starts per turn for the needle's two rarest bytes and hands over to `memmem` where
 * candidates are frequent (crates/engram-core/src/literal.rs); these cases sweep the needle across
 * every position of files around the block size, put candidates everywhere, and make the
 * hand-over happen, checked against `String.includes` line by line.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { type Core, type CoreFileTable, loadCore } from "../src/index.js";
import { prng } from "../src/testing/api.js";

let core: Core;

beforeAll(async () => {
  core = await loadCore();
});

/** What a literal grep in count mode must answer: per file, the lines that include `needle`. */
function expected(files: [string, string][], needle: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [path, content] of files) {
    const n = content.split("\n").filter((line) => line.includes(needle)).length;
    if (n > 0) counts[path] = n;
  }
  return counts;
}

function grepCounts(t: CoreFileTable, needle: string): Record<string, number> {
  const r = t.grep({ pattern: needle, outputMode: "count", maxCount: 1_000_000 });
  expect(r.error).toBeUndefined();
  return r.counts ?? {};
}

function check(files: [string, string][], needle: string) {
  const t = core.createFileTable();
  t.writeMany(files);
  expect(grepCounts(t, needle)).toEqual(expected(files, needle));
}

describe("literal grep", () => {
  it("finds the needle at every position of files around the scan's block size, among near misses", () => {
    for (const needle of ["ab", "xyz", "ENGRAM_RARE_TOKEN_7f3a", "q".repeat(63) + "Z", "é😀"]) {
      // Filler holding the needle's bytes everywhere but never the needle: its last character changed.
      const miss = needle.slice(0, -1) + (needle.endsWith("!") ? "?" : "!");
      for (let len = needle.length; len <= needle.length + 140; len++) {
        const files: [string, string][] = [];
        const filler = miss.repeat(Math.ceil(len / miss.length) + 1).slice(0, len - needle.length);
        files.push([`/miss/${len}`, filler + miss.slice(0, needle.length - 1)]);
        for (let at = 0; at <= filler.length; at++) {
          files.push([`/at/${len}/${at}`, filler.slice(0, at) + needle + filler.slice(at)]);
        }
        check(files, needle);
      }
    }
  });

  it("agrees with includes on random text over a tiny alphabet (candidates everywhere)", () => {
    const rand = prng(13);
    const pick = (s: string) => s[Math.floor(rand() * s.length)];
    for (let round = 0; round < 40; round++) {
      const files: [string, string][] = [];
      for (let i = 0; i < 30; i++) {
        const len = Math.floor(rand() * (rand() < 0.2 ? 5000 : 300));
        files.push([`/f${i}`, Array.from({ length: len }, () => pick("aab\n")).join("")]);
      }
      const needle = Array.from({ length: 1 + Math.floor(rand() * 7) }, () => pick("ab")).join("");
      check(files, needle);
    }
  });

  it("stays linear and exact where every position is a candidate, and for needles past 255 bytes", () => {
    const needle = "ab".repeat(150);
    // Each window holds the pair's bytes and fails only at its last byte: comparisons alone would cost
    // the needle's length at every other position, so the scan must hand over to memmem.
    const near = ("ab".repeat(149) + "ac").repeat(2_000);
    const files: [string, string][] = [
      ["/near", near],
      ["/near-then-match", `${near}\n${needle}\n${near}`],
      ["/match-first", needle + near],
      ["/long", `${"z".repeat(100_000)}${"y".repeat(300)}Q${"x".repeat(40)}`],
      // The match anywhere around where the scan hands over.
      ...Array.from({ length: 400 }, (_, at) => [`/near-${at}`, near.slice(0, at) + needle] as [string, string]),
    ];
    check(files, needle);
    check(files, `${"y".repeat(300)}Q`);
    check(files, "Q");
  });
});
