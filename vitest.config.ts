import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// Where a test file runs is decided by where it lives, but for one checked list:
// - every package's suites run once per core (`native`, `wasm`): the library, the stores;
// - the `engram` command's suites (packages/cli) run once, in the `cli` project, on the core an
//   installed command loads in Node (native). They test the command — flags, configuration,
//   exit codes, processes, terminals, rendering — and reach the core only through the library,
//   whose behaviour the library's own suites check on both cores (docs/decisions/2026-11-29-test-suite-time.md);
// - `*.edge.test.ts` files run in workerd and Chromium, which load the WASM build themselves;
// - suites that never reach the core, in-process or in a process they start (CORE_FREE), run
//   once, in the `core-free` project: its setup counts every call into the core and fails a
//   listed file that makes one.
const CLI = "packages/cli/test/**/*.test.ts";
const EDGE = "**/*.edge.test.ts";
const excluded = [EDGE, "**/node_modules/**"];
// Measured (every call into the core counted) and read: none calls the core or starts a process
// that loads it. A file starting processes that may load the core never belongs here.
const CORE_FREE = [
  "packages/engram/test/agent.layers.test.ts",
  "packages/engram/test/entries.test.ts",
  "packages/engram/test/errors.test.ts",
  "packages/engram/test/mcp.test.ts",
  "packages/engram/test/memory-eval.score.test.ts",
  "packages/engram/test/bench.compare.test.ts",
  "packages/engram/test/models.ai-sdk.test.ts",
  "packages/engram/test/models.fake.test.ts",
  "packages/engram/test/models.llama-stream.test.ts",
  "packages/engram/test/models.openai-compatible.test.ts",
  "packages/engram/test/models.resilience.test.ts",
  "packages/engram/test/models.resolve.test.ts",
  "packages/engram/test/models.sse.test.ts",
  "packages/engram/test/models.text-tool-calls.test.ts",
  "packages/engram/test/options.test.ts",
  "packages/engram/test/skills.parse.test.ts",
  "packages/store-cloudflare/test/alarm-extraction.test.ts",
  "packages/store-cloudflare/test/parts.test.ts",
  "packages/store-sqlite/test/recall.test.ts",
];
// `redactSecrets` is synchronous and needs a loaded core (WASM cannot load synchronously).
const setupFiles = ["packages/engram/test/setup/core.ts"];
// The per-core suites share one module registry per worker (`isolate: false`): importing the
// library's sources into a fresh registry cost each of ~100 files about 0.6 s, a third of what
// most of them spend on their tests. A file that mocks a module resets the registry when it ends
// (packaging.loader, skills.yaml, core.loader-wasm); docs/decisions/2026-11-29-test-suite-time.md.
const perCore = {
  include: ["packages/*/test/**/*.test.ts"],
  exclude: [...excluded, CLI, ...CORE_FREE],
  setupFiles,
  isolate: false,
};

export default defineConfig({
  resolve: {
    // Test the sources: `#node-access` would otherwise resolve to the built file in dist/.
    // Workspace packages resolve to their sources too, so tests never depend on a stale build.
    alias: [
      { find: "#node-access", replacement: src("packages/engram/src/core/node-access.ts") },
      { find: "#skills-yaml", replacement: src("packages/engram/src/skills/yaml.ts") },
      { find: /^engram$/, replacement: src("packages/engram/src/index.ts") },
      { find: /^engram\/testing$/, replacement: src("packages/engram/src/testing/index.ts") },
      { find: /^engram\/kit$/, replacement: src("packages/engram/src/kit.ts") },
      { find: /^engram\/llama$/, replacement: src("packages/engram/src/models/llama.ts") },
      { find: /^@engram\/sqlite$/, replacement: src("packages/store-sqlite/src/index.ts") },
      { find: /^@engram\/postgres$/, replacement: src("packages/store-postgres/src/index.ts") },
    ],
  },
  test: {
    // Vitest's default is one worker per core but one, a single worker on a 2-core machine; most
    // of the slow files wait on the processes, servers and terminals they start.
    maxWorkers: Math.max(2, availableParallelism()),
    // Two files share each core: a test that takes 3 s alone may take 6 s beside another. Time
    // limits stop hung tests; speed is measured by the benches, never by a test's timeout.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      { extends: true, test: { ...perCore, name: "native", env: { ENGRAM_CORE: "native" } } },
      { extends: true, test: { ...perCore, name: "wasm", env: { ENGRAM_CORE: "wasm" } } },
      {
        extends: true,
        test: {
          name: "core-free",
          include: CORE_FREE,
          exclude: excluded,
          setupFiles: ["packages/engram/test/setup/core-free.ts"],
          env: { ENGRAM_CORE: "native" },
        },
      },
      {
        extends: true,
        test: {
          name: "cli",
          include: [CLI],
          exclude: excluded,
          setupFiles,
          // The command is bundled from its sources once per run, not transformed per process.
          globalSetup: ["packages/cli/test/setup/command.ts"],
          env: { ENGRAM_CORE: "native" },
        },
      },
      {
        test: {
          name: "edge",
          include: ["packages/*/test/**/*.edge.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
