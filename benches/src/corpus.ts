/**
 * A deterministic, seeded corpus of source-like files, nested four deep, with Unicode lines
 * (CJK, emoji, astral characters) and rare tokens planted at known counts, so every workload
 * can verify its answer before its time counts.
 */
import { prng } from "engram/testing";

export type SizeName = "tiny" | "small" | "medium" | "large";

export const SIZES: Record<SizeName, { files: number; linesPerFile: number }> = {
  tiny: { files: 120, linesPerFile: 40 },
  small: { files: 1_000, linesPerFile: 72 },
  medium: { files: 10_000, linesPerFile: 72 },
  large: { files: 50_000, linesPerFile: 72 },
};

/** The planted token: appears on exactly `rareLines` lines. */
export const RARE_TOKEN = "ENGRAM_RARE_TOKEN_7f3a";
/** A token on many lines (counted while generating). */
export const COMMON_TOKEN = "return";
/** A regex matching exactly the planted lines (the suffix varies per line). */
export const RARE_REGEX = "ENGRAM_RARE_TOKEN_7f3a_[0-9]{4}\\b";
export const BIG_FILE = "/pkg0/big_module.ts";
export const BIG_FILE_LINES = 10_000;
export const LS_DIR = "/pkg1/src";

export interface Corpus {
  size: SizeName;
  files: { path: string; content: string }[];
  bytes: number;
  expected: {
    rareLines: number;
    commonLines: number;
    tsFiles: number;
    lsEntries: number;
    readFirstLine: string;
  };
}

const WORDS = ["value", "index", "buffer", "config", "handler", "state", "result", "memory", "agent", "route", "token", "cache"];
const UNICODE = ["// 注释：处理用户输入", "// 😀 emoji in a comment", 'const label = "𝄞 music";', "// ما هذا؟ 🦀", "// 日本語のテキスト"];
const EXTENSIONS = ["ts", "ts", "ts", "js", "md", "py"];

function sourceLine(r: () => number, i: number): string {
  const w = () => WORDS[Math.floor(r() * WORDS.length)] as string;
  switch (Math.floor(r() * 8)) {
    case 0:
      return `export function ${w()}_${i}(${w()}: number) {`;
    case 1:
      return `  ${COMMON_TOKEN} ${w()} + ${Math.floor(r() * 1000)};`;
    case 2:
      return UNICODE[Math.floor(r() * UNICODE.length)] as string;
    case 3:
      return `  const ${w()}${i} = await load("${w()}/${w()}");`;
    case 4:
      return "}";
    case 5:
      return `  if (${w()} > ${Math.floor(r() * 100)}) { ${w()}.push(${i}); }`;
    case 6:
      return "";
    default:
      return `  // ${w()} ${w()} ${w()} ${w()}`;
  }
}

export function generateCorpus(size: SizeName, seed = 42): Corpus {
  const { files: count, linesPerFile } = SIZES[size];
  const r = prng(seed);
  const rareEvery = Math.max(1, Math.floor(count / 25));
  const files: Corpus["files"] = [];
  let rareLines = 0;
  let commonLines = 0;
  let tsFiles = 0;
  let bytes = 0;
  const lsChildren = new Set<string>();
  for (let i = 0; i < count; i++) {
    const ext = EXTENSIONS[i % EXTENSIONS.length] as string;
    const path = `/pkg${i % 10}/src/mod${Math.floor(i / 10) % 10}/part${Math.floor(i / 100) % 10}/file${i}.${ext}`;
    const lines: string[] = [];
    for (let l = 0; l < linesPerFile; l++) lines.push(sourceLine(r, l));
    if (i % rareEvery === 0) {
      lines[Math.floor(r() * linesPerFile)] = `  log("${RARE_TOKEN}_${String(i % 10_000).padStart(4, "0")}");`;
    }
    for (const line of lines) {
      if (line.includes(RARE_TOKEN)) rareLines++;
      if (line.includes(COMMON_TOKEN)) commonLines++;
    }
    const content = `${lines.join("\n")}\n`;
    if (ext === "ts") tsFiles++;
    if (path.startsWith(`${LS_DIR}/`)) lsChildren.add(path.slice(LS_DIR.length + 1).split("/")[0] as string);
    bytes += Buffer.byteLength(content);
    files.push({ path, content });
  }
  const big = Array.from({ length: BIG_FILE_LINES }, (_, l) => `export const line${l} = ${l}; // ${WORDS[l % WORDS.length]}`);
  files.push({ path: BIG_FILE, content: `${big.join("\n")}\n` });
  tsFiles++;
  bytes += Buffer.byteLength(files[files.length - 1]?.content ?? "");
  return {
    size,
    files,
    bytes,
    expected: {
      rareLines,
      commonLines: commonLines + big.filter((l) => l.includes(COMMON_TOKEN)).length,
      tsFiles,
      lsEntries: lsChildren.size,
      readFirstLine: big[5_000] as string,
    },
  };
}
