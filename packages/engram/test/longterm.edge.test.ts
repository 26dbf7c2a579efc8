/** Long-term memory in workerd: the edge entry has no `node:` import and runs end to end on
 * the WASM core (BM25 recall included). */
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type WorkerHost, startWorker } from "./fixtures/worker-host.js";

let host: WorkerHost;
let bundle: string;
let mf: WorkerHost["mf"];

beforeAll(async () => {
  host = await startWorker(join(import.meta.dirname, "fixtures/longterm/worker.ts"));
  ({ bundle, mf } = host);
});

afterAll(() => host?.dispose());

it("bundles without any node: import", () => {
  expect(bundle).not.toMatch(/from\s*["']node:|import\(\s*["']node:|require\(\s*["']node:/);
  expect(bundle).not.toContain("FileMemoryStorage");
});

it("captures, extracts, stores and injects long-term memory in workerd", async () => {
  const res = await mf.dispatchFetch("http://localhost/");
  const body = (await res.json()) as { runtime?: string; block?: string; other?: string; error?: string };
  expect(body.error).toBeUndefined();
  expect(body.runtime).toBe("Cloudflare-Workers");
  const facts = (body.block ?? "").split("\n").filter((l) => l.startsWith("- ["));
  expect(facts[0]).toContain("Deploys to Cloudflare Workers"); // relevance beat confidence
  expect(body.block).toContain("Drinks green tea");
  expect(body.block).toContain("[REDACTED]");
  expect(body.block).not.toContain("sk-abcdef");
  expect(body.other).toBe("");
});
