/** Long-term memory in workerd: the edge entry has no `node:` import and runs end to end on
 * the WASM core (BM25 recall included). */
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, expect, it } from "vitest";
import { bundleEntry } from "./fixtures/bundle.js";

let dir: string;
let mf: Miniflare;
let bundle: string;

beforeAll(async () => {
  dir = await bundleEntry(join(import.meta.dirname, "fixtures/longterm/worker.ts"), "worker.js");
  bundle = await readFile(join(dir, "worker.js"), "utf8");
  mf = new Miniflare({
    modules: [
      { type: "ESModule", path: join(dir, "worker.js"), contents: bundle },
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
