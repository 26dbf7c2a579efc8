import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// One suite, run once per core; edge tests (workerd, Chromium) load the WASM build themselves.
const suite = {
  include: ["packages/*/test/**/*.test.ts"],
  // `redactSecrets` is synchronous and needs a loaded core (WASM cannot load synchronously).
  setupFiles: ["packages/engram/test/setup/core.ts"],
  exclude: ["**/*.edge.test.ts", "**/node_modules/**"],
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
    projects: [
      { extends: true, test: { ...suite, name: "native", env: { ENGRAM_CORE: "native" } } },
      { extends: true, test: { ...suite, name: "wasm", env: { ENGRAM_CORE: "wasm" } } },
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
