#!/usr/bin/env node
// Gate: no repeated code outside the documented exceptions in .duplicates-allow.
// Uses the workplace's `duplicates` command (not an npm or Debian package); where it is not on
// PATH the gate says so and passes. Rows marked `boilerplate` (thin, same-shape lines such as
// test set-up) and pairs whose lines are only import/export name lists (the tool skips one-line
// imports but not the inside of multi-line ones) are reported but do not fail; any other row must
// name a file pair listed in .duplicates-allow.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

let out;
try {
  out = execFileSync("duplicates", ["--most", "200", "--seconds", "120"], { encoding: "utf8" });
} catch (e) {
  if (e.code === "ENOENT") {
    console.log("duplicates: command not available here; gate skipped");
    process.exit(0);
  }
  throw e;
}

const allowed = new Set(
  readFileSync(".duplicates-allow", "utf8")
    .split("\n")
    .filter((l) => l.trim() && !l.trimStart().startsWith("#"))
    .map((l) => l.trim().split(/\s+/).slice(0, 2).sort().join(" ")),
);

const NAME_LIST =
  /^\s*(?:(?:import|export)\s+(?:type\s+)?\{|\}\s*from\s+["'].*["'];?|(?:type\s+)?[A-Za-z_$][\w$]*(?:\s+as\s+[\w$]+)?,?|\}?;?)\s*$/;
const onlyNames = (place) => {
  const [, file, from, to] = /^(.+):(\d+)-(\d+)$/.exec(place) ?? [];
  if (!file) return false;
  const lines = readFileSync(file, "utf8")
    .split("\n")
    .slice(Number(from) - 1, Number(to));
  return lines.every((l) => NAME_LIST.test(l));
};

const bad = [];
for (const row of out.split("\n")) {
  const m = /^D\d+ (\S+) ~ (\S+)/.exec(row);
  if (!m || row.includes("boilerplate")) continue;
  const [, a, b] = m;
  if (onlyNames(a) && onlyNames(b)) continue;
  const pair = [a.split(":")[0], b.split(":")[0]].sort().join(" ");
  if (!allowed.has(pair)) bad.push(row);
}
if (bad.length > 0) {
  console.log("duplicates: repeated code (make it one piece, or document the exception in .duplicates-allow):");
  for (const row of bad) console.log(`  ${row}`);
  process.exit(1);
}
console.log(`duplicates: clean (${out.split("\n")[0]})`);
