/** The WASM core inside workerd (Cloudflare's runtime, via miniflare), from a precompiled module. */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, expect, it } from "vitest";
import { bundleEntry } from "./fixtures/bundle.js";
import { expectedScenario } from "./fixtures/scenario.js";

let dir: string;
let mf: Miniflare;

beforeAll(async () => {
  dir = await bundleEntry(join(import.meta.dirname, "fixtures/worker.ts"), "worker.js");
  mf = new Miniflare({
    modules: true,
    scriptPath: join(dir, "worker.js"),
    modulesRoot: dir,
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
    compatibilityDate: "2025-06-01",
  });
});

afterAll(async () => {
  await mf?.dispose();
  await rm(dir, { recursive: true, force: true });
});

it("greps, globs and routes on the WASM core in workerd", async () => {
  const res = await mf.dispatchFetch("http://localhost/");
  const body = (await res.json()) as Record<string, unknown>;
  expect(body.error).toBeUndefined();
  expect(res.status).toBe(200);
  expect(body).toEqual({ runtime: "Cloudflare-Workers", kind: "wasm", ...expectedScenario });
});
