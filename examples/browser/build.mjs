// Bundles src/main.ts for the browser and puts the core's .wasm file beside it: the WASM glue
// fetches `engram_wasm_bg.wasm` relative to the bundled script. Usage: node build.mjs [outDir]
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { build } from "esbuild";

const outDir = process.argv[2] ?? "dist";
mkdirSync(outDir, { recursive: true });
await build({
  entryPoints: ["src/main.ts"],
  outfile: join(outDir, "app.js"),
  bundle: true,
  minify: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  logLevel: "warning",
});
const require = createRequire(import.meta.url);
copyFileSync(require.resolve("@engram/wasm/engram_wasm_bg.wasm"), join(outDir, "engram_wasm_bg.wasm"));
writeFileSync(
  join(outDir, "index.html"),
  '<!doctype html>\n<meta charset="utf-8">\n<title>Engram in the browser</title>\n<pre id="log"></pre>\n<script type="module" src="./app.js"></script>\n',
);
