/**
 * Literal grep finds exactly the lines holding the literal, on both cores. The WASM core scans
 * 64 candidate starts per turn for the needle's two rarest bytes and hands over to `memmem` where
 * candidates are frequent (crates/engram-core/src/literal.rs); these cases sweep the needle across
 * every position of files around the block size, put candidates everywhere, and make the
 * hand-over happen, checked against `String.includes` line by line.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { type Core, loadCore } from "../src/index.js";
import type { CoreFileTable } from "../src/kit.js";
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

/**
 * Case-insensitive grep looks for the letters every match holds in a row with a case-folding
 * scan (on WASM, the pair scan comparing its two bytes folded), and for the non-ASCII characters
 * that also match some of them: `k` the Kelvin sign (U+212A), `s` the long s (U+017F).
 */
describe("case-insensitive and alternation greps", () => {
  it("finds every case of the pattern, the Kelvin sign and long s included, and nothing else", () => {
    const rand = prng(7);
    const cases = (s: string) => [...s].map((c) => (rand() < 0.5 ? c.toUpperCase() : c.toLowerCase())).join("");
    const needle = "engram_rare_token_7f3a";
    const files: [string, string][] = [];
    // 600 files of ~3 KB: past the first megabyte, written in the reverse of path order (scattered).
    for (let i = 0; i < 600; i++) {
      const lines = Array.from({ length: 20 }, (_, j) => `line ${j} of ${i}: ${"filler ".repeat(20 + (j % 5))}`);
      if (i % 23 === 0) lines[i % 20] += cases(needle);
      if (i % 29 === 0) lines[(i + 3) % 20] += "engram_rare_to\u212Aen_7f3a"; // Kelvin sign for k
      if (i % 13 === 0) lines[(i + 5) % 20] += "ENGRAM_RARE_\u017FOKEN_7f3a ENGRAM_RARE_TOKEN_7f3"; // near misses
      files.push([`/d${i % 4}/f${String(i).padStart(3, "0")}.ts`, `${lines.join("\n")}\n`]);
    }
    const scattered = core.createFileTable();
    for (const [p, c] of [...files].reverse()) expect(scattered.write(p, c).error).toBeUndefined();
    // JavaScript's `i` flag with `u` folds as Rust's regex does (simple case folding).
    const reference = (pattern: RegExp) =>
      [...files]
        .sort((a, b) => (a[0] < b[0] ? -1 : 1))
        .flatMap(([p, c]) => c.split("\n").flatMap((text, i) => (pattern.test(text) ? [`${p}:${i + 1}`] : [])));
    const want = reference(/engram_rare_token_7f3a/iu);
    expect(want.length).toBeGreaterThan(40);
    expect(want.some((w) => w.startsWith("/d0/f000"))).toBe(true);
    for (const [pattern, regex] of [
      [needle, false],
      [needle.toUpperCase(), false],
      ["Engram_Rare_Token_7F3A", true],
      ["[Ee][Nn][Gg]ram_rare_token_7f3a", true],
    ] as const) {
      const r = scattered.grep({ pattern, regex, ignoreCase: true, maxCount: 10_000 });
      expect(
        r.matches?.map((m) => `${m.path}:${m.line}`),
        pattern,
      ).toEqual(want);
    }
    expect(scattered.grep({ pattern: "tokens_missing", ignoreCase: true }).matches).toEqual([]);
    // Alternations of a few literals: on WASM each literal is looked for on its own, the DFA
    // started at the first one found; and literals inside a pattern.
    for (const pattern of [
      "engram_rare_to\u212Aen_7f3a|ENGRAM_RARE_\u017FOKEN",
      "(line 7 of 1|line 3 of 2)2[0-9]:",
      "ENGRAM_RARE_TOKEN_7f3(a|b|$)|zzz_absent",
      "(XYZ|line 1 of 59|f)9",
      "ENGRAM_RARE_\u017FOKEN|line 1 of 2",
      // A literal inside, neither prefix nor suffix: only lines holding it are searched.
      "\\d+ of 2\\d: ",
      "[a-z]+ 1 of 3",
    ]) {
      const expected = reference(new RegExp(pattern, "u"));
      expect(expected.length, pattern).toBeGreaterThan(0);
      const r = scattered.grep({ pattern, regex: true, maxCount: 10_000 });
      expect(
        r.matches?.map((m) => `${m.path}:${m.line}`),
        pattern,
      ).toEqual(expected);
    }
  });
});

/**
 * Past its first megabyte, a literal found rarely so far is looked for in the order the files'
 * contents lie in memory, then the files holding it are searched in path order
 * (crates/engram-core/src/grep/search.rs, `grep_with`). Files written one by one in the reverse of their
 * path order lie in the reverse order in memory; the answers must be those of the same files
 * laid out in path order, and of a plain line-by-line reference, for sparse and dense literals,
 * literals that turn dense late, every mode, and caps that cut inside the late part.
 */
describe("literal grep, and regex grep from a literal prefix, past the first megabyte", () => {
  const COUNT = 900;
  const path = (i: number) => `/d${i % 3}/f${String(i).padStart(4, "0")}.txt`;
  function content(i: number): string {
    const lines = [`file ${i}`];
    if (i % 97 === 0) lines.push(`a sparse needle ${i}`);
    if (i >= 600 && i % 2 === 0) lines.push(`late needle ${i}`, "and a late needle again");
    // On every file of /d0 (the first third in path order), then on the last few of /d2.
    if (i % 3 === 0 || (i % 3 === 2 && i >= 870)) lines.push(`front-loaded ${i}`);
    lines.push("é😀 ".repeat(300));
    return `${lines.join("\n")}\n`;
  }
  const files: [string, string][] = Array.from({ length: COUNT }, (_, i) => [path(i), content(i)]);
  const inPathOrder = [...files].sort((a, b) => (a[0] < b[0] ? -1 : 1));

  function tables(): [CoreFileTable, CoreFileTable] {
    const scattered = core.createFileTable();
    for (const [p, c] of [...inPathOrder].reverse()) expect(scattered.write(p, c).error).toBeUndefined();
    const laidOut = core.createFileTable();
    expect(laidOut.writeMany(inPathOrder).error).toBeUndefined();
    return [scattered, laidOut];
  }

  it("answers as the same files laid out in path order, and as a line-by-line reference", () => {
    const [scattered, laidOut] = tables();
    expect(scattered.grep({ pattern: "needle" }).matches?.length).toBeGreaterThan(0);
    // "file " is on every file: dense from the start, it stays in path order.
    // "front-loaded" fills most of a small cap in the first megabyte, the rest far behind it.
    const literals = ["sparse needle", "late needle", "needle", "absent needle", "file ", "front-loaded"];
    // Regexes whose literal prefix more files hold than match them.
    const regexes = ["sparse needle \\d*[05]$", "late needle \\d+0$", "front-loaded \\d*[13579]\\b"];
    const searches = [...literals.map((pattern) => ({ pattern, regex: false })), ...regexes.map((pattern) => ({ pattern, regex: true }))];
    for (const { pattern, regex } of searches) {
      const holds = regex ? (text: string) => new RegExp(pattern).test(text) : (text: string) => text.includes(pattern);
      const reference = inPathOrder.flatMap(([p, c]) => c.split("\n").flatMap((text, i) => (holds(text) ? [`${p}:${i + 1}:${text}`] : [])));
      if (regex) expect(reference.length, pattern).toBeGreaterThan(0);
      for (const maxCount of [100_000, 7, 250, 305, 700]) {
        const r = scattered.grep({ pattern, regex, maxCount });
        expect(
          r.matches?.map((m) => `${m.path}:${m.line}:${m.text}`),
          `${pattern} ${maxCount}`,
        ).toEqual(reference.slice(0, maxCount));
        expect(r.truncated).toBe(reference.length > maxCount);
      }
      for (const outputMode of ["content", "files_with_matches", "count"] as const) {
        for (const maxCount of [undefined, 1, 7, 150, 250, 305, 700]) {
          const options = { pattern, regex, outputMode, maxCount };
          expect(scattered.grep(options), `${pattern} ${outputMode} ${maxCount}`).toEqual(laidOut.grep(options));
        }
      }
    }
  });

  it("gives the grep tool the same text, stopped at the same point", () => {
    const [scattered, laidOut] = tables();
    const searches = [
      ...["sparse needle", "late needle", "needle", "file ", "front-loaded"].map((pattern) => ({ pattern, regex: false })),
      { pattern: "late needle \\d+0$", regex: true },
    ];
    for (const { pattern, regex } of searches) {
      for (const maxChars of [200, 5_000, 1_000_000]) {
        const text = (t: CoreFileTable) => t.grepText({ pattern, regex, maxCount: 1000 }, maxChars);
        expect(text(scattered), `${pattern} ${maxChars}`).toEqual(text(laidOut));
      }
    }
  });
});
