/** A durable run in a Durable Object whose instance is aborted in the middle (as a crash or a
 * deploy ends it): the next request — a new instance — adopts the run's committed steps. No model
 * request whose answer was committed is made again, no tool runs twice, and the thread ends as
 * an uninterrupted run's but for the notice of the call the abort cut. */
import { type Server, createServer } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Bundle, bundleWorker, startWorker } from "./fixtures/host.js";

const STEPS = 6;
let bundle: Bundle;
let server: Server;
let url: string;
/** The step each model request asked for, and the effects, in order (per thread). */
const asked: Record<string, number[]> = {};
const effects: string[] = [];

beforeAll(async () => {
  bundle = await bundleWorker(join(import.meta.dirname, "fixtures/worker.ts"));
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      if (req.url === "/effects") {
        effects.push(body);
        res.end("ok");
        return;
      }
      const request = JSON.parse(body) as { messages: { role: string; content: unknown }[] };
      const thread = String(request.messages.find((m) => m.role === "user")?.content ?? "");
      const step = request.messages.filter((m) => m.role === "tool").length / 2;
      (asked[thread] ??= []).push(step);
      const chunk = (delta: object, finish: string | null) =>
        `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (step >= STEPS) {
        res.end(`${chunk({ role: "assistant", content: "finished" }, null)}${chunk({}, "stop")}data: [DONE]\n\n`);
        return;
      }
      const calls = [
        { index: 0, id: `rec-${step}`, type: "function", function: { name: "record", arguments: JSON.stringify({ step }) } },
        {
          index: 1,
          id: `write-${step}`,
          type: "function",
          function: { name: "write_file", arguments: JSON.stringify({ file_path: `/notes/${step}.md`, content: `note ${step}` }) },
        },
      ];
      res.end(`${chunk({ role: "assistant", tool_calls: calls }, null)}${chunk({}, "tool_calls")}data: [DONE]\n\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
});

afterAll(async () => {
  await bundle?.dispose();
  await new Promise((resolve) => server?.close(resolve));
});

type Ran = { messages: { role: string; content: string; toolCallId?: string }[]; files: Record<string, string>; stepsLeft: number };

it("a run whose object was aborted mid-step is adopted by the next request: nothing completed runs again", async () => {
  const mf = await startWorker(bundle, { bindings: { MODEL_URL: url } });
  try {
    const call = async (path: string) => mf.dispatchFetch(`http://localhost${path}`);
    const first = await call("/durable-run?object=o&thread=whole");
    const whole = (await first.json()) as Ran;
    expect(first.status, JSON.stringify(whole)).toBe(200);
    expect(whole.messages.at(-1)?.content).toBe("finished");

    // Both threads start with "go": the runs go one after another, and the model server's
    // record is reset in between.
    asked.go = [];
    effects.length = 0;
    const killed = await call("/durable-run?object=o&thread=killed&abortAt=3");
    expect(killed.status).not.toBe(200);
    const before = [...(asked.go ?? [])];
    expect(before).toEqual([0, 1, 2, 3]);
    const resumed = (await (await call("/durable-run?object=o&thread=killed&resume")).json()) as Ran;
    // Only the steps after the one the abort cut are asked for; step 3's record ran once.
    expect((asked.go ?? []).slice(before.length)).toEqual([4, 5, 6]);
    expect(effects).toEqual(["record 0", "record 1", "record 2", "record 3", "record 4", "record 5"]);
    expect(resumed.stepsLeft).toBe(0);
    expect(resumed.files).toEqual(whole.files);
    expect(resumed.messages.length).toBe(whole.messages.length);
    resumed.messages.forEach((m, i) => {
      if (m.role === "tool" && m.toolCallId === "rec-3") expect(m.content).toContain("was interrupted");
      else expect(m).toEqual(whole.messages[i]);
    });
  } finally {
    await mf.dispose();
  }
}, 120_000);
