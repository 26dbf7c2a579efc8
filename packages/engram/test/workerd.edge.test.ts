/** The WASM core inside workerd (Cloudflare's runtime, via miniflare), from a precompiled module. */
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, expect, it } from "vitest";
import { bundleEntry } from "./fixtures/bundle.js";
import { expectedAgentScenario, expectedScenario } from "./fixtures/scenario.js";

let dir: string;
let mf: Miniflare;

beforeAll(async () => {
  dir = await bundleEntry(join(import.meta.dirname, "fixtures/worker.ts"), "worker.js");
  // The modules are listed as a deployment would upload them (no import scanning), so the
  // bundle's optional dynamic imports (AI SDK providers) stay unresolved until used.
  mf = new Miniflare({
    modules: [
      { type: "ESModule", path: join(dir, "worker.js"), contents: await readFile(join(dir, "worker.js"), "utf8") },
      { type: "CompiledWasm", path: join(dir, "engram_wasm_bg.wasm"), contents: await readFile(join(dir, "engram_wasm_bg.wasm")) },
    ],
    modulesRoot: dir,
    compatibilityDate: "2025-06-01",
  });
});

afterAll(async () => {
  await mf?.dispose();
  await rm(dir, { recursive: true, force: true });
});

it("greps, globs, routes and runs an agent turn on the WASM core in workerd", async () => {
  const res = await mf.dispatchFetch("http://localhost/");
  const body = (await res.json()) as Record<string, unknown>;
  expect(body.error).toBeUndefined();
  expect(res.status).toBe(200);
  expect(body).toEqual({ runtime: "Cloudflare-Workers", kind: "wasm", ...expectedScenario, agent: expectedAgentScenario });
});
