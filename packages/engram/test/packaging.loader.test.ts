/**
 * What a user sees when the native package for their platform is missing, and the loader under
 * Deno without --allow-env. (The packaging test, scripts/pack-test.sh, checks the same from the
 * installed tarballs; these catch a regression in the source suite, on both cores.)
 */
import { afterEach, beforeEach, expect, it, vi } from "vitest";

const missing = Object.assign(new Error("Cannot find module '@engram/native'"), { code: "MODULE_NOT_FOUND" });

beforeEach(() => {
  vi.resetModules();
  vi.doMock("#node-access", async (importOriginal) => ({
    ...(await importOriginal<typeof import("#node-access")>()),
    loadNativeBinding: () => {
      throw missing;
    },
  }));
  vi.stubEnv("ENGRAM_CORE", "");
});

afterEach(() => {
  vi.doUnmock("#node-access");
  // Files may share a worker's module registry: the next one must not import the mocked graph.
  vi.resetModules();
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

it("falls back to WebAssembly with one notice that names the package to install", async () => {
  const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
  const { loadCore, nativePackageName } = await import("../src/core/loader.js");
  expect((await loadCore()).kind).toBe("wasm");
  expect((await loadCore()).kind).toBe("wasm");
  expect(warn).toHaveBeenCalledTimes(1);
  expect(String(warn.mock.calls[0]?.[0])).toContain(`npm install ${nativePackageName()}`);
  expect(nativePackageName()).toMatch(/^@engram\/native-(linux-(x64|arm64)-(gnu|musl)|darwin-(x64|arm64)|win32-x64-msvc)$/);
});

it("FilesystemBackend without the native core is an EngramError core_unavailable naming the package", async () => {
  const { FilesystemBackend, EngramError } = await import("../src/index.js");
  const { nativePackageName } = await import("../src/core/loader.js");
  let thrown: unknown;
  try {
    new FilesystemBackend({ rootDir: "." });
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(EngramError);
  expect(thrown).toMatchObject({ code: "core_unavailable", cause: missing });
  expect((thrown as Error).message).toContain(`is not installed for ${nativePackageName().slice("@engram/native-".length)}`);
  expect((thrown as Error).message).toContain(`npm install ${nativePackageName()}`);
});

it("a forced native core that is missing is an error, never a silent fallback", async () => {
  vi.stubEnv("ENGRAM_CORE", "native");
  const { loadCore } = await import("../src/core/loader.js");
  await expect(loadCore()).rejects.toMatchObject({ name: "EngramError", code: "core_unavailable" });
});

it("under Deno without --allow-env the environment is never read (no throw, no prompt)", async () => {
  const get = vi.fn(() => {
    throw new Error('NotCapable: Requires env access to "ENGRAM_CORE"');
  });
  const querySync = vi.fn(() => ({ state: "prompt" }));
  vi.stubGlobal("Deno", { env: { get }, permissions: { querySync } });
  const { loadCore } = await import("../src/core/loader.js");
  // Deno loads WebAssembly (never the native addon), reading the .wasm file from disk.
  expect((await loadCore()).kind).toBe("wasm");
  expect(querySync).toHaveBeenCalledWith({ name: "env", variable: "ENGRAM_CORE" });
  expect(get).not.toHaveBeenCalled();
});

it("under Deno with env access granted, ENGRAM_CORE is honoured", async () => {
  const get = vi.fn(() => "bogus");
  vi.stubGlobal("Deno", { env: { get }, permissions: { querySync: () => ({ state: "granted" }) } });
  const { loadCore } = await import("../src/core/loader.js");
  await expect(loadCore()).rejects.toMatchObject({ code: "core_unavailable", message: expect.stringContaining('"bogus"') });
  expect(get).toHaveBeenCalledWith("ENGRAM_CORE");
});
