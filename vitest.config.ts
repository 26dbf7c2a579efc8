import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// One suite, run once per core; edge tests (workerd, Chromium) load the WASM build themselves.
const suite = {
  include: ["packages/*/test/**/*.test.ts"],
  exclude: ["**/*.edge.test.ts", "**/node_modules/**"],
};

export default defineConfig({
  resolve: {
    // Test the sources: `#node-access` would otherwise resolve to the built file in dist/.
    alias: { "#node-access": fileURLToPath(new URL("packages/engram/src/core/node-access.ts", import.meta.url)) },
  },
  test: {
    projects: [
      { test: { ...suite, name: "native", env: { ENGRAM_CORE: "native" } } },
      { test: { ...suite, name: "wasm", env: { ENGRAM_CORE: "wasm" } } },
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
