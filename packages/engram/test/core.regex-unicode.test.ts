/**
 * Unicode in grep regexes, on both cores (vitest projects `native` and `wasm`). The core is built
 * with every `regex` Unicode table except `unicode-age` and `unicode-segment` (~54 KB
 * of the WASM module). This pins what holds — Unicode-aware `\w`, `\d`, `\s`, `\b`, case-insensitive
 * matching of non-ASCII text, general categories, scripts and boolean properties — and what the
 * trim removed: `\p{Age=..}` and the segmentation properties are `invalid_pattern`, alike on both
 * cores.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { type Core, loadCore } from "../src/index.js";

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const LINES = [
  "naïve", // 1: letters outside ASCII
  "٣٤٥", // 2: Arabic-Indic digits
  "a\u00a0b", // 3: no-break space
  "café", // 4: é inside a word
  " é", // 5: é after a space
  "école", // 6
  "σας", // 7: Greek
  "漢字", // 8: Han
  "ascii_only", // 9
  "zero\u200bwidth", // 10: a format character (Cf)
  "ΣΑΣ", // 11
];

/** Line numbers the regex matches in {@link LINES}, or the error code. */
function lines(pattern: string, ignoreCase = false): number[] | string {
  const t = core.createFileTable();
  t.write("/u.txt", `${LINES.join("\n")}\n`);
  const r = t.grep({ pattern, regex: true, ignoreCase });
  if (r.error) return r.error.code;
  return (r.matches ?? []).map((m) => m.line);
}

describe("grep regex: Unicode that holds on both cores", () => {
  it.each([
    ["^\\w+$", [1, 2, 4, 6, 7, 8, 9, 11]],
    ["^\\d+$", [2]],
    ["a\\sb", [3]],
    ["\\bé", [5, 6]],
    ["^(?-u:\\w)+$", [9]],
    ["^\\p{L}+$", [1, 4, 6, 7, 8, 11]],
    ["\\p{Greek}", [7, 11]],
    ["\\p{Script=Han}", [8]],
    ["^\\p{Alphabetic}+$", [1, 4, 6, 7, 8, 11]],
    ["\\p{Lu}", [11]],
    ["\\p{Cf}", [10]],
    ["\\p{White_Space}", [3, 5]],
  ] as const)("%s", (pattern, expected) => {
    expect(lines(pattern)).toEqual(expected);
  });

  it("matches non-ASCII text case-insensitively (regex and literal)", () => {
    expect(lines("^ÉCOLE$", true)).toEqual([6]);
    expect(lines("^σας$", true)).toEqual([7, 11]);
    expect(lines("(?i)^ΣΑΣ$")).toEqual([7, 11]);
    const t = core.createFileTable();
    t.write("/u.txt", `${LINES.join("\n")}\n`);
    expect(t.grep({ pattern: "ÉCOLE", ignoreCase: true }).matches?.map((m) => m.line)).toEqual([6]);
  });
});

describe("grep regex: Unicode tables left out of the core", () => {
  it.each(["\\p{Age=6.0}", "\\p{Word_Break=ALetter}", "\\p{Grapheme_Cluster_Break=Extend}", "\\p{Sentence_Break=Upper}"])(
    "%s is invalid_pattern",
    (pattern) => {
      expect(lines(pattern)).toBe("invalid_pattern");
    },
  );
});
