/** Durable across restarts: workerd persisting its Durable Objects to a directory; what one
 * runtime wrote (a long-term fact, an AGENTS.md edit, a thread) is what the next runtime's first
 * model request carries. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { expectRemembered } from "./fixtures/expectations.js";
import { type Bundle, bundleWorker, startWorker } from "./fixtures/host.js";
import { type ModelServer, startModelServer } from "./fixtures/model-server.js";

let bundle: Bundle;
let model: ModelServer;
let dir: string;

beforeAll(async () => {
  bundle = await bundleWorker(join(import.meta.dirname, "fixtures/worker.ts"));
  model = await startModelServer("D'accord.");
  dir = await mkdtemp(join(tmpdir(), "engram-do-persist-"));
});

afterAll(async () => {
  await model?.close();
  await bundle?.dispose();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Starts a runtime on `dir`, makes the requests in order, disposes it; their JSON bodies. */
async function inRuntime(paths: string[]): Promise<unknown[]> {
  const mf = await startWorker(bundle, { persistTo: dir, bindings: { MODEL_URL: model.url } });
  try {
    const out: unknown[] = [];
    for (const path of paths) {
      const res = await mf.dispatchFetch(`http://localhost${path}`);
      const body = await res.json();
      expect(res.status, JSON.stringify(body)).toBe(200);
      out.push(body);
    }
    return out;
  } finally {
    await mf.dispose();
  }
}

it("keeps a fact, an AGENTS.md edit and the thread across a restart: the next model request carries them", async () => {
  const [remembered] = await inRuntime(["/remember?object=u1", `/ask?object=u1&text=${encodeURIComponent("My name is Ada.")}`]);
  expect(remembered).toMatchObject({ fact: { fact: { content: "Prefers metric units" } }, edited: { occurrences: 1 } });
  const before = model.requests.length;

  const [answer] = await inRuntime([`/ask?object=u1&text=${encodeURIComponent("How tall is Everest?")}`]);
  expect(answer).toBe("D'accord.");
  expectRemembered(model.requests.slice(before).find((r) => r.stream)?.messages, "How tall is Everest?");
});
