/**
 * `engram chat` stays responsive while long-term memory extraction is slow: the model is a
 * scripted one on 127.0.0.1 (a local server, so extraction waits for idle time) whose extraction
 * endpoint answers only when the test lets it. A turn typed while an extraction runs gets its
 * answer at once (the extraction is aborted and resumes after the turn); `/exit` and Ctrl-C
 * return within 2 s (the bound) and keep the unfinished extraction as pending work,
 * which the next session extracts: nothing is lost. Measured latencies are written to
 * `.tmp/cli-responsive-latencies.json`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  type ScriptedModelServer,
  type WireRequest,
  isMemoryExtraction,
  lastUserText,
  memoryUpdate,
  startScriptedModelServer,
} from "../../../examples/node/scripted-model-server.js";
import { REPO, cleanEnv, engram, tempDir } from "./helpers.js";
import { Terminal } from "./tmux.js";

const FACT = "Favourite drink is green tea";
const terminal = new Terminal();
let server: ScriptedModelServer;
let home: ReturnType<typeof tempDir>;
/** While set, extraction requests wait for it. */
let gate: { promise: Promise<void>; open: () => void } | undefined;
/** While set, extraction replies are no JSON (the memory then reports a failed attempt). */
let garbled = false;
const SLOW_ANSWER = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
const latencies: Record<string, number> = {};

function closedGate() {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

const extractions = () => server.requests.filter(isMemoryExtraction);
const said = (r: WireRequest) => r.messages.map((m) => m.content ?? "").join("\n");

beforeAll(async () => {
  home = tempDir("engram-responsive-home-");
  server = await startScriptedModelServer(async (r) => {
    if (isMemoryExtraction(r)) {
      await gate?.promise;
      if (garbled) return { text: "this is no JSON" };
      return { text: memoryUpdate(said(r).includes("my favourite drink is green tea") ? [{ content: FACT }] : []) };
    }
    const user = lastUserText(r);
    if (user.includes("slow answer")) return { text: SLOW_ANSWER, chunkDelayMs: 60 };
    if (user.includes("long story")) return { text: `${"once upon a time ".repeat(300)}THE END`, chunkDelayMs: 40 };
    return { text: `ok: ${user}` };
  });
});

afterAll(async () => {
  gate?.open();
  terminal.close();
  await server.close();
  mkdirSync(join(REPO, ".tmp"), { recursive: true });
  writeFileSync(join(REPO, ".tmp", "cli-responsive-latencies.json"), `${JSON.stringify(latencies, null, 2)}\n`);
  home.remove();
});

const env = () =>
  cleanEnv({ ENGRAM_HOME: home.path, ENGRAM_USER: "tester", ENGRAM_MEMORY_DEBOUNCE_MS: "0", LANG: "C.UTF-8", TERM: "xterm-256color" });

function startChat(name: string, baseURL = server.baseURL): string {
  const session = terminal.session(name);
  terminal.start(session, {
    env: env(),
    args: ["--base-url", baseURL, "--model", "openai-compatible:scripted", "chat"],
    dir: home.path,
  });
  return session;
}

/** Resolves when the server has received `n` extraction requests. */
async function extractionCount(n: number, ms = 30_000): Promise<void> {
  const until = Date.now() + ms;
  while (extractions().length < n) {
    if (Date.now() > until) throw new Error(`only ${extractions().length} extraction requests after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Runs `act`, then waits for the pane to show `text`; returns the milliseconds between. */
async function timed(session: string, act: () => void, text: string | RegExp | ((screen: string) => boolean)): Promise<number> {
  const started = performance.now();
  act();
  await terminal.waitFor(session, text, 30_000);
  return Math.round(performance.now() - started);
}

it("a turn preempts a slow extraction, /exit returns within 2 s keeping it, and the next session extracts it", {
  timeout: 240_000,
}, async () => {
  gate = closedGate();
  const first = startChat("a");
  await terminal.waitFor(first, "› ");
  terminal.type(first, "my favourite drink is green tea");
  await terminal.waitFor(first, "ok: my favourite drink is green tea");
  await extractionCount(1); // idle: the extraction runs, and hangs

  // A turn typed now is answered at once: the extraction is aborted, and resumes after the turn.
  latencies.turnWhileExtracting = await timed(
    first,
    () => terminal.type(first, "what is the capital of France?"),
    "ok: what is the capital of France?",
  );
  expect(latencies.turnWhileExtracting).toBeLessThan(2000);
  await extractionCount(2);

  // /exit while the resumed extraction hangs: out within 2 s, the work kept for next time.
  latencies.exitWhileExtracting = await timed(first, () => terminal.type(first, "/exit"), "EXITED");
  const closed = terminal.pane(first);
  expect(closed).toContain("EXITED 0");
  expect(closed).toContain("memory saved (1 conversation to learn from next time)");
  expect(latencies.exitWhileExtracting).toBeLessThan(2000);

  // The next session: the kept extraction runs in its idle time, and nothing was lost.
  gate.open();
  gate = undefined;
  const second = startChat("b");
  await terminal.waitFor(second, "› ");
  terminal.type(second, "hello again");
  await terminal.waitFor(second, "ok: hello again");
  await extractionCount(3);
  terminal.type(second, "/exit");
  expect(await terminal.waitFor(second, "EXITED")).toContain("EXITED 0");
  const facts = await engram(["memory", "facts"], { env: env(), cwd: home.path });
  expect(facts.stdout).toContain(FACT);
});

it("Ctrl-C cancels a slow turn, and a second Ctrl-C exits, each within 2 s, while extraction waits", { timeout: 240_000 }, async () => {
  gate = closedGate();
  const session = startChat("c");
  await terminal.waitFor(session, "› ");
  terminal.type(session, "my favourite drink is green tea");
  await terminal.waitFor(session, "ok: my favourite drink is green tea");
  const before = extractions().length;
  await extractionCount(before + 1);

  // A slow streamed turn: Ctrl-C stops it.
  terminal.type(session, "tell me a long story");
  await terminal.waitFor(session, "once upon a time once upon");
  latencies.cancelTurn = await timed(session, () => terminal.keys(session, "C-c"), "cancelled");
  expect(latencies.cancelTurn).toBeLessThan(2000);

  // At the prompt, with the extraction running again: the second Ctrl-C leaves within 2 s.
  await extractionCount(before + 2);
  latencies.ctrlCExit = await timed(session, () => terminal.keys(session, "C-c"), "EXITED");
  const closed = terminal.pane(session);
  expect(closed).toContain("EXITED 0");
  expect(closed).toContain("memory saved (1 conversation to learn from next time)");
  expect(latencies.ctrlCExit).toBeLessThan(2000);
});

it("with a model elsewhere, extraction runs alongside a turn, and its diagnostics wait for the answer", { timeout: 240_000 }, async () => {
  // 0.0.0.0 reaches the same server but is no loopback name: extraction runs in the background.
  gate = closedGate();
  garbled = true;
  const session = startChat("d", server.baseURL.replace("127.0.0.1", "0.0.0.0"));
  await terminal.waitFor(session, "› ");
  const before = extractions().length;
  terminal.type(session, "my favourite drink is green tea");
  await terminal.waitFor(session, "ok: my favourite drink is green tea");
  await extractionCount(before + 1);
  terminal.type(session, "a slow answer please");
  await terminal.waitFor(session, "word3 ");
  gate.open(); // the extraction fails while the answer streams
  gate = undefined;
  const lines = (await terminal.waitFor(session, /word39[\s\S]*extraction/)).split("\n");
  const answer = lines.findIndex((l) => l.includes("word0 "));
  expect(lines[answer]).toContain(SLOW_ANSWER);
  expect(lines.findIndex((l) => l.includes("extraction"))).toBeGreaterThan(answer);
  garbled = false;
  terminal.type(session, "/exit");
  expect(await terminal.waitFor(session, "EXITED")).toContain("EXITED 0");
});
