// Checks the documentation (a step of scripts/test.sh):
// - every relative link in the Markdown files points at a file or directory that exists inside
//   the repository (a link that leaves it, or to nothing, fails);
// - every ```ts code block in docs/ compiles against the workspace sources (each block is its own
//   ES module; tsconfig.check.json maps `engram` and `@engram/*` to the sources).
// Usage: node scripts/check-docs.mjs
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const problems = [];

function markdownFiles() {
  const out = ["README.md", "CHANGELOG.md", "CONTRIBUTING.md", "SECURITY.md", "ARCHITECTURE.md"].filter((f) => existsSync(join(ROOT, f)));
  for (const dir of ["docs", "examples", "packages", "bindings"]) {
    for (const f of readdirSync(join(ROOT, dir), { recursive: true })) {
      const path = join(dir, String(f));
      if (path.endsWith(".md") && !/(^|\/)(node_modules|dist|pkg|api)\//.test(path)) out.push(path);
    }
  }
  return out;
}

// --- links -------------------------------------------------------------------------------------
const files = markdownFiles();
for (const file of files) {
  const text = readFileSync(join(ROOT, file), "utf8").replace(/```[\s\S]*?```/g, (block) => block.replace(/[^\n]/g, " "));
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    // A path in inline code that climbs out of the repository is a reference readers cannot follow.
    // (README and docs/; other top-level notes may cite the spec beside the repository.)
    const inlinePaths = file === "README.md" || file.startsWith("docs/") ? line.matchAll(/`(\.\.\/[^`\s]+)`/g) : [];
    for (const m of inlinePaths) {
      const abs = resolve(ROOT, dirname(file), m[1]);
      if (abs !== ROOT && !abs.startsWith(ROOT + sep)) problems.push(`${file}:${i + 1}: refers to a file outside the repository: ${m[1]}`);
    }
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#")) continue;
      const path = decodeURIComponent(target.split("#")[0]);
      const abs = resolve(ROOT, dirname(file), path);
      const where = `${file}:${i + 1}`;
      if (abs !== ROOT && !abs.startsWith(ROOT + sep)) problems.push(`${where}: link leaves the repository: ${target}`);
      else if (!existsSync(abs)) problems.push(`${where}: broken link: ${target}`);
    }
  });
}

// --- code samples ----------------------------------------------------------------------------------
const out = join(ROOT, ".tmp/docs-samples");
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const samples = new Map(); // sample file → { file, line }
for (const file of files.filter((f) => f.startsWith("docs/"))) {
  const lines = readFileSync(join(ROOT, file), "utf8").split("\n");
  let start = -1;
  for (let i = 0; i < lines.length; i++) {
    if (start < 0 && /^```(ts|typescript)\s*$/.test(lines[i])) start = i;
    else if (start >= 0 && lines[i].startsWith("```")) {
      const name = `${file.replace(/[/.]/g, "_")}_${start + 1}.mts`;
      writeFileSync(join(out, name), `${lines.slice(start + 1, i).join("\n")}\nexport {};\n`);
      samples.set(name, { file, line: start + 2 });
      start = -1;
    }
  }
}
writeFileSync(
  join(out, "tsconfig.json"),
  JSON.stringify({ extends: "../../tsconfig.check.json", compilerOptions: { noUnusedLocals: false }, include: ["*.mts"] }, null, 2),
);
if (samples.size > 0) {
  const tsc = spawnSync(join(ROOT, "node_modules/.bin/tsc"), ["-p", join(out, "tsconfig.json"), "--pretty", "false"], {
    cwd: ROOT,
    encoding: "utf8",
  });
  for (const line of `${tsc.stdout}${tsc.stderr}`.split("\n")) {
    const m = line.match(/([^/\s]+\.mts)\((\d+),(\d+)\): (.*)$/);
    if (m && samples.has(m[1])) {
      const { file, line: first } = samples.get(m[1]);
      problems.push(`${file}:${first + Number(m[2]) - 1}: sample does not compile: ${m[4]}`);
    } else if (line.includes("error TS")) problems.push(`docs samples: ${line}`);
  }
  if (tsc.status !== 0 && problems.length === 0) problems.push(`tsc failed on the docs samples:\n${tsc.stdout}${tsc.stderr}`);
}

if (problems.length > 0) {
  console.error(`docs: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join("\n")}`);
  process.exit(1);
}
console.log(`docs: ${files.length} Markdown files, links resolve; ${samples.size} TypeScript samples compile (${relative(ROOT, out)})`);
