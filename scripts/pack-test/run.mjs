// The packaging test: what a user installs, exercised the way a user runs it.
//
// 1. `npm pack` every publishable package (as `napi pre-publish` would prepare @engram/native:
//    optionalDependencies on the per-platform packages built here), check that every file a
//    manifest points at (main, types, bin, exports, imports) and LICENSE/README are inside, and
//    print each tarball's size and file count.
// 2. Install the tarballs into a fresh project outside the workspace (no links; third-party
//    dependencies come from the registry through a cache under .cache/pack-test).
// 3. Run the examples there: Node on the native core and on WASM (ENGRAM_CORE=wasm), the WASM
//    fallback when no native package matches, PostgreSQL from two processes, the Cloudflare
//    Worker bundled with esbuild in workerd (miniflare), Deno, and a bundled page in headless
//    Chromium; type-check the examples against the published .d.ts with the oldest supported
//    TypeScript.
//
// Usage: node scripts/pack-test/run.mjs [--keep] [--only node,wasm,fallback,postgres,workerd,deno,browser,types]
import { execFile, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { PACKAGES, manifestTargets, nativePlatform } from "./packages.mjs";

const ROOT = resolve(import.meta.dirname, "../..");
const CACHE = join(ROOT, ".cache/pack-test");
const BIN = join(ROOT, "node_modules/.bin");
const args = process.argv.slice(2);
const keep = args.includes("--keep");
const onlyArg = args.indexOf("--only");
const only = onlyArg >= 0 ? new Set(args[onlyArg + 1].split(",")) : undefined;
const wanted = (step) => !only || only.has(step);
const PG_URL = process.env.ENGRAM_PG_URL ?? "postgres://engram:engram@127.0.0.1:5432/engram";
/** The oldest TypeScript the published declarations support (README, docs/guides/quick-start.md). */
const OLDEST_TS = "5.0";
/** The most a Worker's JavaScript may weigh, minified: the example's bundle fails above it. */
const WORKER_BUNDLE_LIMIT = 384 * 1024;

const failures = [];
const started = Date.now();
const log = (text) => console.log(`[pack-test ${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s] ${text}`);

function run(cmd, argv, options = {}) {
  const r = spawnSync(cmd, argv, { encoding: "utf8", maxBuffer: 64 << 20, timeout: 180_000, ...options });
  if (r.error) throw r.error;
  return r;
}

/** `run` without blocking the event loop: for steps that run side by side. */
function runAsync(cmd, argv, options = {}) {
  return new Promise((done, fail) => {
    execFile(cmd, argv, { encoding: "utf8", maxBuffer: 64 << 20, timeout: 180_000, ...options }, (error, stdout, stderr) => {
      if (error && typeof error.code !== "number") fail(error);
      else done({ status: error ? error.code : 0, stdout, stderr });
    });
  });
}

function must(cmd, argv, options = {}) {
  const r = run(cmd, argv, options);
  if (r.status !== 0) {
    throw new Error(`${cmd} ${argv.join(" ")} exited ${r.status}\n${r.stdout}\n${r.stderr}`.trim());
  }
  return r;
}

/** Runs one check; a failure is recorded and reported at the end, the other checks still run. */
async function check(name, fn) {
  if (!wanted(name)) return;
  const t = Date.now();
  try {
    await fn();
    log(`ok    ${name} (${((Date.now() - t) / 1000).toFixed(1)}s)`);
  } catch (e) {
    failures.push(name);
    log(`FAIL  ${name}: ${e instanceof Error ? (e.stack ?? e.message) : e}`);
  }
}

function expectEqual(actual, expected, what) {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }
}

/** The last line of stdout that is a JSON object: what an example reports. */
function report(r) {
  const line = r.stdout
    .trim()
    .split("\n")
    .reverse()
    .find((l) => l.startsWith("{"));
  if (!line) throw new Error(`no JSON report in the output:\n${r.stdout}\n${r.stderr}`);
  return JSON.parse(line);
}

// --- 1. pack ------------------------------------------------------------------------------------
const work = mkdtempSync(join(tmpdir(), "engram-pack-"));
const tarballs = join(work, "tarballs");
mkdirSync(tarballs);
log(`working in ${work}`);

const platform = nativePlatform();
const nativeDir = join(ROOT, "bindings/node");
const builtPlatforms = readdirSync(join(nativeDir, "npm")).filter((p) => existsSync(join(nativeDir, `engram.${p}.node`)));
if (!builtPlatforms.includes(platform)) throw new Error(`no native build for ${platform}: run scripts/setup.sh first`);
// The per-platform package directory holds the binary at pack time (a release job puts every
// target's binary there with `napi artifacts`).
for (const p of builtPlatforms) cpSync(join(nativeDir, `engram.${p}.node`), join(nativeDir, "npm", p, `engram.${p}.node`));

/** The project's canonical location, stated once: the root package.json's `repository` (see
 * CONTRIBUTING.md). Every published package points there. */
const REPOSITORY = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"))
  .repository.url.replace(/^git\+/, "")
  .replace(/\.git$/, "");

function repositoryProblems(manifest, dir) {
  const expected = {
    "repository.url": `git+${REPOSITORY}.git`,
    "repository.directory": dir,
    homepage: `${REPOSITORY}/tree/main/${dir}#readme`,
    bugs: `${REPOSITORY}/issues`,
  };
  const actual = {
    "repository.url": manifest.repository?.url,
    "repository.directory": manifest.repository?.directory,
    homepage: manifest.homepage,
    bugs: typeof manifest.bugs === "string" ? manifest.bugs : manifest.bugs?.url,
  };
  return Object.keys(expected)
    .filter((k) => actual[k] !== expected[k])
    .map((k) => `${k} is ${JSON.stringify(actual[k])}, expected ${JSON.stringify(expected[k])}`);
}

/** name → { file, size, entryCount, files } */
const packed = new Map();
const toPack = PACKAGES(builtPlatforms).map((pkg) => {
  const dir = pkg.stage ? pkg.stage(join(ROOT, pkg.dir), join(work, "stage", pkg.dir)) : join(ROOT, pkg.dir);
  return { pkg, dir, manifest: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) };
});
// One npm process packs every folder (npm's start-up was most of each package's time); its JSON
// report lists the tarballs in the order of the folders given.
const infos = JSON.parse(
  must("npm", ["pack", "--json", "--pack-destination", tarballs, ...toPack.map((p) => p.dir)], { cwd: work }).stdout,
);
if (infos.length !== toPack.length) throw new Error(`npm pack reported ${infos.length} tarballs for ${toPack.length} packages`);
for (const [i, { pkg, manifest }] of toPack.entries()) {
  const info = infos[i];
  if (info.name !== manifest.name) throw new Error(`npm pack reported ${info.name} where ${manifest.name} was expected`);
  const files = new Set(info.files.map((f) => f.path));
  const missing = [...new Set(["package.json", "LICENSE", "README.md", ...manifestTargets(manifest), ...(pkg.need ?? [])])].filter(
    (f) => !files.has(f),
  );
  if (missing.length > 0) failures.push(`tarball ${info.name} lacks ${missing.join(", ")}`);
  const where = repositoryProblems(manifest, pkg.dir);
  if (where.length > 0) failures.push(`${info.name}: ${where.join("; ")}`);
  packed.set(info.name, { file: join(tarballs, info.filename), size: info.size, unpacked: info.unpackedSize, entryCount: info.entryCount });
}
console.log("\n  tarball                              packed   unpacked  files");
for (const [name, t] of packed) {
  console.log(
    `  ${name.padEnd(34)} ${(t.size / 1024).toFixed(1).padStart(8)} kB ${(t.unpacked / 1024).toFixed(1).padStart(8)} kB ${String(t.entryCount).padStart(5)}`,
  );
}
console.log("");
if (failures.length > 0) {
  for (const f of failures) log(`FAIL  ${f}`);
  process.exit(1);
}

// --- 2. install into a fresh project outside the workspace --------------------------------------
const app = join(work, "app");
mkdirSync(app);
const specs = Object.fromEntries([...packed].map(([name, t]) => [name, `file:${t.file}`]));
const direct = ["engram", "@engram/sqlite", "@engram/postgres", "@engram/cloudflare", "@engram/deno", "@engram/browser", "@engram/cli"];
writeFileSync(
  join(app, "package.json"),
  JSON.stringify(
    {
      name: "engram-pack-test-app",
      private: true,
      type: "module",
      dependencies: Object.fromEntries(direct.map((n) => [n, specs[n]])),
      // What the examples' own tooling needs (the browser example builds with esbuild).
      // zod and yaml: what an app passing zod tools and the YAML parser installs (the types step).
      devDependencies: { "@types/node": "^20.19.0", esbuild: "^0.28.0", yaml: "^2.9.1", zod: "^4.6.7" },
      // Transitive @engram/* and engram dependencies resolve to these tarballs, never the registry.
      overrides: specs,
    },
    null,
    2,
  ),
);
{
  const t = Date.now();
  // Scripts are off: the only package that has one is better-sqlite3 (a from-source build here);
  // its binary is built once per version and Node ABI and kept in the cache.
  must(
    "npm",
    ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--prefer-offline", "--cache", join(CACHE, "npm"), "--loglevel=error"],
    {
      cwd: app,
      env: { ...process.env, npm_config_nodedir: existsSync("/usr/include/node/node.h") ? "/usr" : "" },
    },
  );
  provideBetterSqlite3(app);
  log(`installed the tarballs into ${app} (${((Date.now() - t) / 1000).toFixed(1)}s)`);
}
for (const name of packed.keys()) {
  if (name.startsWith("@engram/native-") && !name.endsWith(platform)) continue;
  const where = join(app, "node_modules", name);
  if (!existsSync(join(where, "package.json"))) failures.push(`${name} was not installed from its tarball`);
}

function provideBetterSqlite3(appDir) {
  const dir = join(appDir, "node_modules/better-sqlite3");
  const { version } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const cached = join(CACHE, `better-sqlite3-${version}-abi${process.versions.modules}-${process.platform}-${process.arch}.node`);
  const target = join(dir, "build/Release/better_sqlite3.node");
  if (!existsSync(cached)) {
    log(`building better-sqlite3 ${version} from source (once per version; cached)`);
    must("npm", ["rebuild", "better-sqlite3", "--loglevel=error"], {
      cwd: appDir,
      timeout: 600_000,
      env: { ...process.env, npm_config_nodedir: existsSync("/usr/include/node/node.h") ? "/usr" : "" },
    });
    mkdirSync(CACHE, { recursive: true });
    cpSync(target, cached);
  }
  mkdirSync(dirname(target), { recursive: true });
  cpSync(cached, target);
}

/** Copies an example into the app (so it resolves the installed packages) and returns its path. */
function example(name) {
  const to = join(app, name);
  cpSync(join(ROOT, "examples", name), to, { recursive: true, filter: (src) => !/node_modules|\.db$|dist$/.test(src) });
  return to;
}

/** Transpiles an example's .ts files in place (as tsx would run them). */
async function transpile(dir) {
  const { transform } = await import(join(ROOT, "node_modules/esbuild/lib/main.js"));
  for (const f of readdirSync(dir, { recursive: true })) {
    if (!f.endsWith(".ts") || f.endsWith(".d.ts")) continue;
    const src = readFileSync(join(dir, f), "utf8");
    const { code } = await transform(src, { loader: "ts", format: "esm", target: "es2022" });
    writeFileSync(join(dir, f.replace(/\.ts$/, ".js")), code);
  }
}

// --- 3. the runtimes ------------------------------------------------------------------------------
const sqliteExample = example("sqlite-memory");
await transpile(sqliteExample);

for (const core of ["native", "wasm"]) {
  await check(core === "native" ? "node" : "wasm", () => {
    const env = { ...process.env, ENGRAM_EXAMPLE_DB: join(work, `memory-${core}.db`) };
    if (core === "wasm") env.ENGRAM_CORE = "wasm";
    else delete env.ENGRAM_CORE;
    const first = report(must("node", ["main.js"], { cwd: sqliteExample, env }));
    expectEqual(first, { core, answer: "Noted: I will remember that your name is Ada.", modelCalls: 2, memoryStored: true }, "first run");
    const second = report(must("node", ["main.js"], { cwd: sqliteExample, env }));
    expectEqual(second, { core, answer: "Welcome back, Ada!", modelCalls: 1, memoryStored: true }, "second run (a new process)");
    if (core === "native") llamaChildProcess();
  });
}

/** `engram/llama` runs its model in a child process whose entry ships in the tarball and is found
 * next to the installed module, whatever the working directory (a node-llama-cpp stand-in answers). */
function llamaChildProcess() {
  const dir = join(app, "llama-child-check");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "stand-in.mjs"),
    `const meter = { getState: () => ({ usedInputTokens: 3, usedOutputTokens: 2 }) };
export async function getLlama() {
  return {
    loadModel: async () => ({
      trainContextSize: 2048,
      createContext: async () => ({ contextSize: 2048, getSequence: () => ({ nextTokenIndex: 5, tokenMeter: meter }), dispose: async () => {} }),
      dispose: async () => {},
    }),
    createGrammarForJsonSchema: async () => ({}),
    dispose: async () => {},
  };
}
export class LlamaChat {
  async generateResponse() { return { response: JSON.stringify({ answer: "pid " + process.pid }), metadata: { stopReason: "eogToken" } }; }
  dispose() {}
}
`,
  );
  const script = join(dir, "main.mjs");
  writeFileSync(
    script,
    `import { LlamaCppModel } from "engram/llama";
const model = new LlamaCppModel({ modelPath: ${JSON.stringify(script)}, module: ${JSON.stringify(join(dir, "stand-in.mjs"))} });
const out = await model.invoke({ system: "", messages: [{ role: "user", content: "hi" }], tools: [{ name: "ls", description: "List.", parameters: { type: "object", properties: {} } }] });
await model.dispose();
console.log(JSON.stringify({ answer: out.message.content.replace(/\\d+/, "N"), child: out.message.content !== "pid " + process.pid }));
`,
  );
  // From another working directory: the child's entry is resolved from the module, not the cwd.
  const r = must("node", [script], { cwd: tmpdir() });
  expectEqual(report(r), { answer: "pid N", child: true }, "LlamaCppModel in its child process");
}

await check("fallback", () => {
  // No native package for this platform: one notice, the WASM core, and FilesystemBackend names
  // the package to install.
  const pkgDir = join(app, "node_modules/@engram", `native-${platform}`);
  const hidden = join(work, `hidden-native-${platform}`);
  renameSync(pkgDir, hidden);
  try {
    const script = join(app, "fallback.mjs");
    writeFileSync(
      script,
      `import { loadCore, FilesystemBackend, EngramError } from "engram";
const kinds = [(await loadCore()).kind, (await loadCore()).kind];
let error;
try { new FilesystemBackend({ rootDir: ${JSON.stringify(app)} }); } catch (e) { error = { engram: e instanceof EngramError, code: e.code, message: e.message }; }
console.log(JSON.stringify({ kinds, error }));
`,
    );
    const r = must("node", [script], { cwd: app, env: { ...process.env, ENGRAM_CORE: "" } });
    const out = report(r);
    expectEqual(out.kinds, ["wasm", "wasm"], "cores loaded");
    const notices = r.stderr.split("\n").filter((l) => l.includes("[engram]"));
    if (notices.length !== 1) throw new Error(`expected one notice, got ${notices.length}:\n${r.stderr}`);
    if (!notices[0].includes(`@engram/native-${platform}`)) throw new Error(`the notice does not name the package: ${notices[0]}`);
    expectEqual([out.error?.engram, out.error?.code], [true, "core_unavailable"], "FilesystemBackend without the native core");
    if (!out.error.message.includes(`npm install @engram/native-${platform}`)) throw new Error(`unhelpful message: ${out.error.message}`);
  } finally {
    renameSync(hidden, pkgDir);
  }
});

await check("cli", () => {
  const r = must(join(app, "node_modules/.bin/engram"), ["--help"], { cwd: app });
  if (!/Usage/i.test(r.stdout)) throw new Error(`engram --help printed no usage:\n${r.stdout}`);
});

await check("postgres", async () => {
  const dir = example("postgres");
  await transpile(dir);
  const r = must("node", ["main.js"], { cwd: dir, env: { ...process.env, DATABASE_URL: PG_URL } });
  const out = report(r);
  expectEqual(out, { workers: 2, answer: "Both workers reported: worker 1 done, worker 2 done.", modelCalls: 1 }, "postgres example");
});

let workerSize;
await check("workerd", async () => {
  const dir = example("cloudflare-worker");
  const { bundleWorker, runWorker } = await import("./workerd.mjs");
  const bundle = await bundleWorker(ROOT, dir, join(work, "worker-dist"));
  workerSize = bundle;
  log(`      Workers bundle: ${(bundle.bytes / 1024).toFixed(1)} kB minified (limit ${WORKER_BUNDLE_LIMIT / 1024} kB)`);
  if (bundle.bytes > WORKER_BUNDLE_LIMIT) {
    throw new Error(
      `the Workers bundle is ${(bundle.bytes / 1024).toFixed(1)} kB, over ${WORKER_BUNDLE_LIMIT / 1024} kB: ${describeTop(bundle)}`,
    );
  }
  // The example uses no skills: the YAML parser stays out (#skills-yaml under workerd).
  if (bundle.packages.has("yaml")) throw new Error("the Workers bundle carries the yaml package, though the example uses no skills");
  const out = await runWorker(ROOT, bundle);
  expectEqual(out.first, { answer: "Saved: you prefer short answers.", core: "wasm" }, "first request");
  expectEqual(out.second, { answer: "Short answer, as you prefer.", core: "wasm" }, "second request (memory from the Durable Object)");
  expectEqual(
    out.streamed,
    { status: 200, type: "text/event-stream", text: "Short answer, as you prefer.", done: true },
    "third request (streamed)",
  );
});

await check("deno", () => {
  // The app's root is the Deno project here (its node_modules holds the tarballs' packages).
  const dir = app;
  for (const f of ["deno.json", "main.ts"]) cpSync(join(ROOT, "examples/deno", f), join(dir, f));
  const permissions = readFileSync(join(dir, "deno.json"), "utf8").match(/"start":\s*"deno run ([^"]*) main\.ts"/)?.[1];
  if (permissions === undefined) throw new Error("examples/deno/deno.json has no start task");
  const r = must(join(BIN, "deno"), ["run", "--quiet", ...permissions.split(/\s+/).filter(Boolean), "main.ts"], {
    cwd: dir,
    env: { ...process.env, DENO_DIR: join(CACHE, "deno"), DENO_NO_UPDATE_CHECK: "1", ENGRAM_CORE: "" },
  });
  const out = report(r);
  expectEqual(
    out,
    { core: "wasm", answer: "You like tea.", modelCalls: 3, wrote: ["Wrote /memories/AGENTS.md", "Wrote /notes.md"] },
    "deno example",
  );
  if (r.stderr.trim() !== "") throw new Error(`unexpected stderr:\n${r.stderr}`);
});

await check("browser", async () => {
  const dir = example("browser");
  const { runPage } = await import("./browser.mjs");
  const out = await runPage(ROOT, dir, join(work, "browser-dist"));
  expectEqual(
    out,
    { core: "wasm", answer: "You like tea.", modelCalls: 3, wrote: ["Wrote /memories/AGENTS.md", "Wrote /notes.md"] },
    "browser example",
  );
});

await check("types", async () => {
  const ts = join(CACHE, `typescript-${OLDEST_TS}`);
  if (!existsSync(join(ts, "node_modules/typescript/bin/tsc"))) {
    must("npm", [
      "install",
      "--prefix",
      ts,
      "--no-save",
      "--no-audit",
      "--no-fund",
      "--cache",
      join(CACHE, "npm"),
      `typescript@~${OLDEST_TS}.0`,
    ]);
  }
  const tsc = join(ts, "node_modules/typescript/bin/tsc");
  const errors = [];
  // pg-protocol (under @types/pg, which @engram/postgres's declarations reference) publishes
  // declarations written by TypeScript ≥ 5.7 (`Buffer<ArrayBufferLike>`): not ours to fix; they
  // are reported, and anything else fails.
  const thirdParty = /node_modules\/pg-protocol\/dist\/[^(]+\(\d+,\d+\): error TS2315: Type 'Buffer' is not generic\./;
  const tolerated = new Set();
  // Incremental: the diagnostics of declarations whose text has not changed since the last run
  // (node's and the DOM's types, most of the check) come from tsc's own build info, kept per
  // project under .cache; any changed file, and everything that depends on it, is checked again.
  const buildInfoCache = join(CACHE, `tsbuildinfo-${OLDEST_TS}`);
  mkdirSync(buildInfoCache, { recursive: true });
  const tscRun = async (name, project, extra = []) => {
    const cwd = statSync(project).isDirectory() ? project : dirname(project);
    const buildInfo = join(cwd, "types.tsbuildinfo");
    const cached = join(buildInfoCache, `${name}.tsbuildinfo`);
    if (existsSync(cached)) cpSync(cached, buildInfo);
    const r = await runAsync("node", [tsc, "-p", project, "--incremental", "--tsBuildInfoFile", buildInfo, ...extra], { cwd });
    // Through a rename: a packaging test running at the same time never reads half a file.
    if (existsSync(buildInfo)) {
      cpSync(buildInfo, `${cached}.${process.pid}`);
      renameSync(`${cached}.${process.pid}`, cached);
    }
    if (r.status === 0) return undefined;
    const lines = `${r.stdout}${r.stderr}`.split("\n").filter((l) => l.trim() !== "");
    const errors = lines.filter((l) => !thirdParty.test(l));
    for (const l of lines) if (thirdParty.test(l)) tolerated.add(l.replace(/^.*node_modules\//, ""));
    return errors.length > 0 ? errors.join("\n") : undefined;
  };
  /** Each check is one single-threaded tsc: two at a time (the test suite runs on two cores). */
  const checks = [];
  // The examples, checking library declarations too (skipLibCheck off; what passes so passes with
  // the examples' own skipLibCheck).
  for (const name of ["sqlite-memory", "postgres", "cloudflare-worker", "browser"]) {
    const dir = existsSync(join(app, name)) ? join(app, name) : example(name);
    checks.push(async () => {
      const out = await tscRun(name, dir, ["--skipLibCheck", "false"]);
      if (out) errors.push(`${name} (skipLibCheck false):\n${out}`);
    });
  }
  // Every public entry point, a zod tool and the optional peers absent, with skipLibCheck off,
  // under both module resolutions a TypeScript 5.0 project uses.
  const entriesIndex = `import { type Tool, FakeChatModel, StateBackend, createDeepAgent, setSkillsYamlParser } from "engram";
import { type BackendCapabilities, namespaceId, wrapBackend } from "engram/kit";
import { FileMemoryStorage } from "engram/memory/longterm/node";
import { McpToolset, toToolResult } from "engram/mcp";
import { AgentTracing } from "engram/tracing";
import { SqliteStore } from "@engram/sqlite";
import { PostgresStore } from "@engram/postgres";
import { DenoKvCheckpointer, DenoKvStore } from "@engram/deno";
import { IndexedDBStore } from "@engram/browser";
import { parse } from "yaml";
import * as z from "zod";
setSkillsYamlParser(parse);
const lookup: Tool<{ q: string }> = { name: "lookup", description: "d", schema: z.object({ q: z.string() }), run: async ({ q }) => ({ content: q }) };
export const agent = createDeepAgent(new FakeChatModel(["ok"]), { backend: new StateBackend(), tools: [lookup as unknown as Tool<never>] });
export const kit: [BackendCapabilities["toolText"], string, typeof wrapBackend] = [undefined, namespaceId(["a"]), wrapBackend];
export { AgentTracing, DenoKvCheckpointer, DenoKvStore, FileMemoryStorage, IndexedDBStore, McpToolset, PostgresStore, SqliteStore, toToolResult };
`;
  for (const [module, moduleResolution] of [
    ["NodeNext", "NodeNext"],
    ["ESNext", "Bundler"],
  ]) {
    const entries = join(app, `types-check-${moduleResolution.toLowerCase()}`);
    mkdirSync(entries, { recursive: true });
    writeFileSync(join(entries, "index.ts"), entriesIndex);
    const compilerOptions = { target: "ES2022", module, moduleResolution, lib: ["ES2022", "DOM"], types: [], strict: true, noEmit: true };
    writeFileSync(
      join(entries, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { ...compilerOptions, skipLibCheck: false }, include: ["index.ts"] }),
    );
    checks.push(async () => {
      const out = await tscRun(`entries-${moduleResolution}`, join(entries, "tsconfig.json"));
      if (out) errors.push(`every entry point (moduleResolution ${moduleResolution}, skipLibCheck false):\n${out}`);
    });
  }
  const next = async () => {
    for (let check = checks.shift(); check; check = checks.shift()) await check();
  };
  await Promise.all([next(), next()]);
  if (tolerated.size > 0) {
    console.log(`\n  TypeScript ${OLDEST_TS}, skipLibCheck off: third-party declarations that need TypeScript ≥ 5.7 (reported, not ours):`);
    for (const l of tolerated) console.log(`    ${l}`);
  }
  if (errors.length > 0) throw new Error(`TypeScript ${OLDEST_TS} rejects the published declarations:\n${errors.join("\n")}`);
});

function describeTop(bundle) {
  return bundle.top.map(([p, b]) => `${p} ${(b / 1024).toFixed(1)} kB`).join(", ");
}

if (workerSize) {
  console.log(
    `\n  Workers bundle (esbuild, minified): ${(workerSize.bytes / 1024).toFixed(1)} kB, gzip ${(gzipSync(workerSize.code).length / 1024).toFixed(1)} kB`,
  );
  console.log(`  + engram_wasm_bg.wasm ${(workerSize.wasmBytes / 1024).toFixed(1)} kB, gzip ${(workerSize.wasmGzip / 1024).toFixed(1)} kB`);
  console.log(`  by package: ${describeTop(workerSize)}\n`);
}

if (!keep) rmSync(work, { recursive: true, force: true });
else log(`kept ${work}`);
if (failures.length > 0) {
  log(`FAILED: ${failures.join(", ")}`);
  process.exit(1);
}
log("all packaging checks passed");
