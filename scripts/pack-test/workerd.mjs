// The Cloudflare Worker example: bundled as wrangler bundles it, then run in workerd (miniflare).
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

/** Bundles `<dir>/src/index.ts` like `wrangler deploy --minify`: esbuild, ES modules, the
 * workerd/worker/browser conditions, and `.wasm` imports uploaded as compiled modules beside it. */
export async function bundleWorker(root, dir, outDir) {
  const esbuild = await import(join(root, "node_modules/esbuild/lib/main.js"));
  mkdirSync(outDir, { recursive: true });
  const wasm = [];
  const result = await esbuild.build({
    entryPoints: [join(dir, "src/index.ts")],
    outfile: join(outDir, "index.js"),
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker", "browser"],
    target: "es2022",
    metafile: true,
    logLevel: "error",
    external: ["node:*"],
    plugins: [
      {
        name: "compiled-wasm",
        setup(b) {
          b.onResolve({ filter: /\.wasm$/ }, async (args) => {
            if (args.pluginData === "compiled-wasm") return undefined;
            const resolved = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: "compiled-wasm" });
            if (resolved.errors.length > 0) return { errors: resolved.errors };
            wasm.push(resolved.path);
            return { path: "./engram_wasm_bg.wasm", external: true };
          });
        },
      },
    ],
  });
  if (wasm.length !== 1) throw new Error(`expected one .wasm import, found ${wasm.length}`);
  copyFileSync(wasm[0], join(outDir, "engram_wasm_bg.wasm"));
  const code = readFileSync(join(outDir, "index.js"));
  const wasmBytes = readFileSync(join(outDir, "engram_wasm_bg.wasm"));
  const inputs = Object.values(result.metafile.outputs).find((o) => o.entryPoint)?.inputs ?? {};
  const byPackage = new Map();
  for (const [path, { bytesInOutput }] of Object.entries(inputs)) {
    const pkg = path.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1] ?? "example";
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + bytesInOutput);
  }
  return {
    dir: outDir,
    code,
    bytes: code.length,
    gzip: gzipSync(code).length,
    wasmBytes: wasmBytes.length,
    wasmGzip: gzipSync(wasmBytes).length,
    top: [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 8),
    /** package → bytes in the bundle ("example" for the example's own files). */
    packages: byPackage,
  };
}

/** Runs the bundle in workerd with its SQLite-backed Durable Object class; three requests from one
 * user, the last one streamed. */
export async function runWorker(root, bundle) {
  const { Miniflare } = await import(join(root, "node_modules/miniflare/dist/src/index.js"));
  const mf = new Miniflare({
    modules: [
      { type: "ESModule", path: join(bundle.dir, "index.js"), contents: bundle.code.toString("utf8") },
      {
        type: "CompiledWasm",
        path: join(bundle.dir, "engram_wasm_bg.wasm"),
        contents: readFileSync(join(bundle.dir, "engram_wasm_bg.wasm")),
      },
    ],
    modulesRoot: bundle.dir,
    compatibilityDate: "2025-06-01",
    durableObjects: { USER_AGENT: { className: "UserAgent", useSQLite: true } },
  });
  try {
    const ask = async (text) => {
      const res = await mf.dispatchFetch("http://localhost/chat?user=u1", { method: "POST", body: text });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${body}`);
      return JSON.parse(body);
    };
    const first = await ask("I prefer short answers.");
    const second = await ask("Explain KV.");
    // The same answer streamed as server-sent events: the text of every event before [DONE].
    const res = await mf.dispatchFetch("http://localhost/chat?user=u1", {
      method: "POST",
      body: "And once more, streamed.",
      headers: { accept: "text/event-stream" },
    });
    const events = (await res.text()).split("\n\n").filter((e) => e.startsWith("data: "));
    const done = events.at(-1) === "data: [DONE]";
    const streamed = events
      .slice(0, -1)
      .map((e) => JSON.parse(e.slice(6)))
      .join("");
    return { first, second, streamed: { status: res.status, type: res.headers.get("content-type"), text: streamed, done } };
  } finally {
    await mf.dispose();
  }
}
