/**
 * The WASM core from a module the caller provides: a precompiled
 * `WebAssembly.Module` (`wasmModule`), or `wasmSource` — the module's bytes, or a `fetch` response
 * (or a promise of one) compiled while it downloads. A real HTTP server on 127.0.0.1 serves the
 * package's `.wasm` file. Each test loads a fresh loader (the loader caches one core per kind).
 */
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { afterAll, beforeAll, beforeEach, expect, it, vi } from "vitest";
import type { Core } from "../src/core/types.js";

const wasmFile = createRequire(import.meta.url).resolve("@engram/wasm/engram_wasm_bg.wasm");
const bytes = readFileSync(wasmFile);

let server: Server;
let base: string;
/** Requests the server has answered, by path. */
const served: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    served.push(req.url ?? "");
    if (req.url === "/core.wasm") res.writeHead(200, { "content-type": "application/wasm" }).end(bytes);
    else if (req.url === "/octet") res.writeHead(200, { "content-type": "application/octet-stream" }).end(bytes);
    else res.writeHead(404).end("not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  // Files may share a worker's module registry: the next one gets a loader of its own.
  vi.resetModules();
  vi.restoreAllMocks();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  vi.resetModules();
  vi.restoreAllMocks();
});

/** A fresh loader module: its per-kind cache is empty. */
async function freshLoader() {
  return import("../src/core/loader.js");
}

/** The core works: a write, then a grep that finds it. */
function works(core: Core): void {
  expect(core.kind).toBe("wasm");
  const t = core.createFileTable();
  t.write("/a.txt", "one\nneedle here\n");
  expect(t.grep({ pattern: "needle" }).matches?.map((m) => [m.path, m.line])).toEqual([["/a.txt", 2]]);
}

it("compiles a response served as application/wasm with compileStreaming, from a real server", async () => {
  const { loadCore } = await freshLoader();
  const streaming = vi.spyOn(WebAssembly, "compileStreaming");
  works(await loadCore({ core: "wasm", wasmSource: fetch(`${base}/core.wasm`) }));
  expect(streaming).toHaveBeenCalledTimes(1);
  expect(served).toContain("/core.wasm");
});

it("reads a response of another type whole, then compiles it (compileStreaming would refuse it)", async () => {
  const { loadCore } = await freshLoader();
  const streaming = vi.spyOn(WebAssembly, "compileStreaming");
  const response = await fetch(`${base}/octet`);
  works(await loadCore({ core: "wasm", wasmSource: response }));
  expect(streaming).not.toHaveBeenCalled();
  expect(response.bodyUsed).toBe(true);
});

it("compiles the module's bytes", async () => {
  const { loadCore } = await freshLoader();
  const compile = vi.spyOn(WebAssembly, "compile");
  const source = new Uint8Array(bytes);
  works(await loadCore({ core: "wasm", wasmSource: source }));
  expect(compile.mock.calls.map((call) => call[0] === source)).toEqual([true]);
});

it("uses a precompiled module as it is", async () => {
  const { loadCore } = await freshLoader();
  const wasmModule = await WebAssembly.compile(bytes);
  const compile = vi.spyOn(WebAssembly, "compile");
  works(await loadCore({ core: "wasm", wasmModule }));
  expect(compile).not.toHaveBeenCalled();
});

it("a failed download is core_unavailable naming the HTTP status; the next load can succeed", async () => {
  const { loadCore } = await freshLoader();
  const failed = loadCore({ core: "wasm", wasmSource: fetch(`${base}/missing.wasm`) });
  await expect(failed).rejects.toMatchObject({ name: "EngramError", code: "core_unavailable" });
  await expect(failed.catch((e: Error) => Promise.reject(e.cause))).rejects.toMatchObject({
    message: expect.stringContaining("HTTP 404"),
  });
  works(await loadCore({ core: "wasm", wasmSource: fetch(`${base}/core.wasm`) }));
});

it("bytes that are not a WebAssembly module are core_unavailable with the compile error as cause", async () => {
  const { loadCore } = await freshLoader();
  const failed = loadCore({ core: "wasm", wasmSource: new TextEncoder().encode("not wasm at all") });
  await expect(failed).rejects.toMatchObject({ code: "core_unavailable" });
  await expect(failed.catch((e: Error) => Promise.reject(e.cause))).rejects.toBeInstanceOf(WebAssembly.CompileError);
});

it("wrong option types are a ConfigError on wasmSource", async () => {
  const { loadCore } = await freshLoader();
  const wasmModule = await WebAssembly.compile(bytes);
  await expect(loadCore({ core: "wasm", wasmModule, wasmSource: bytes })).rejects.toMatchObject({
    name: "ConfigError",
    code: "invalid_config",
    option: "wasmSource",
  });
  await expect(loadCore({ core: "wasm", wasmSource: wasmFile as unknown as BufferSource })).rejects.toMatchObject({
    name: "ConfigError",
    option: "wasmSource",
  });
  // A promise of something else than a Response: the load fails with that ConfigError as cause.
  const failed = loadCore({ core: "wasm", wasmSource: Promise.resolve(wasmFile as unknown as Response) });
  await expect(failed).rejects.toMatchObject({ code: "core_unavailable" });
  await expect(failed.catch((e: Error) => Promise.reject(e.cause))).rejects.toMatchObject({ name: "ConfigError" });
});

it.runIf((process.features as { require_module?: boolean }).require_module === true)(
  "in Node, loads the package's own module without an event-loop turn (no GC or timer runs inside the load)",
  async () => {
    const { loadCore } = await freshLoader();
    const compile = vi.spyOn(WebAssembly, "compile");
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    const core = await loadCore({ core: "wasm" });
    expect(turned).toBe(false);
    expect(compile).not.toHaveBeenCalled();
    works(core);
  },
);
