/** The WASM core inside workerd (Cloudflare's runtime, via miniflare), from a precompiled module. */
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { expectedAgentScenario, expectedScenario } from "./fixtures/scenario.js";
import { type WorkerHost, startWorker } from "./fixtures/worker-host.js";

let host: WorkerHost;

beforeAll(async () => {
  host = await startWorker(join(import.meta.dirname, "fixtures/worker.ts"));
});

afterAll(() => host?.dispose());

it("greps, globs, routes and runs an agent turn on the WASM core in workerd", async () => {
  const res = await host.mf.dispatchFetch("http://localhost/");
  const body = (await res.json()) as Record<string, unknown>;
  expect(body.error).toBeUndefined();
  expect(res.status).toBe(200);
  expect(body).toEqual({ runtime: "Cloudflare-Workers", kind: "wasm", ...expectedScenario, agent: expectedAgentScenario });
});
