// What the packaging test packs, and what each tarball must contain.
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The publishable packages. `@engram/native` is staged the way `napi pre-publish` prepares it
 * for a release: its optionalDependencies name the per-platform packages (here: the ones built on
 * this machine; a release job builds every target in its `napi.targets`).
 */
export function PACKAGES(builtPlatforms) {
  return [
    { dir: "packages/engram", need: ["dist/index.js", "dist/core/node-access.js", "dist/core/node-access.web.js"] },
    { dir: "bindings/wasm", need: ["pkg/engram_wasm.js", "pkg/engram_wasm_bg.wasm"] },
    {
      dir: "bindings/node",
      need: ["index.js", "index.d.ts"],
      stage(from, to) {
        mkdirSync(to, { recursive: true });
        for (const f of ["index.js", "index.d.ts", "LICENSE", "README.md"]) cpSync(join(from, f), join(to, f));
        const manifest = JSON.parse(readFileSync(join(from, "package.json"), "utf8"));
        manifest.optionalDependencies = Object.fromEntries(builtPlatforms.map((p) => [`${manifest.name}-${p}`, manifest.version]));
        delete manifest.scripts;
        writeFileSync(join(to, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
        return to;
      },
    },
    ...builtPlatforms.map((p) => ({ dir: `bindings/node/npm/${p}`, need: [`engram.${p}.node`] })),
    { dir: "packages/store-sqlite" },
    { dir: "packages/store-postgres" },
    { dir: "packages/store-cloudflare" },
    { dir: "packages/store-browser" },
    { dir: "packages/store-deno" },
    { dir: "packages/cli" },
  ];
}

/** Every file a manifest points at: main, types, bin, and the targets of exports and imports. */
export function manifestTargets(manifest) {
  const out = [];
  const add = (value) => {
    if (typeof value === "string") {
      if (!value.includes("*")) out.push(value.replace(/^\.\//, ""));
    } else if (value && typeof value === "object") {
      for (const v of Object.values(value)) add(v);
    }
  };
  add(manifest.main);
  add(manifest.types);
  add(manifest.bin);
  add(manifest.exports);
  add(manifest.imports);
  return out;
}

/** This machine's napi-rs platform name (as `@engram/native-<platform>`). */
export function nativePlatform() {
  const { platform, arch } = process;
  if (platform === "win32") return `${platform}-${arch}-msvc`;
  if (platform !== "linux") return `${platform}-${arch}`;
  const glibc = process.report?.getReport?.().header?.glibcVersionRuntime;
  return `${platform}-${arch}-${glibc ? "gnu" : "musl"}`;
}
