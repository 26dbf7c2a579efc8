/**
 * The prompt rows of the bench page: measured by `npm run bench -- --only prompt` (and by every
 * full run), saved as `benches/results/<date>-prompt.json`, rendered as a section of
 * docs/benchmarks.md.
 */
import type { Core } from "engram";
import type { PromptReport } from "./render.js";
import { type PromptRow, SCRIPT, oursRow, peerRow } from "./scenario.js";
import { measureWasmModule } from "./wasm-module.js";
import { measureWorkerd } from "./workerd.js";

export type { PromptReport } from "./render.js";

/** Our two model paths and the peer, one after the other (each against its own server);
 * `quick` (the tiny size) takes the start-up figures from fewer processes. A run of ours that
 * does not take the script's turns, or an event that invalidates what comes before its part,
 * fails: the figures would not describe the task. */
export async function measurePromptRows(core: Core, repo: string, log: (m: string) => void, quick = false): Promise<PromptReport> {
  const rows: PromptRow[] = [];
  for (const make of [() => oursRow("openai-compatible", core), () => oursRow("ai-sdk", core), peerRow]) {
    const row = await make();
    const turns = SCRIPT.length + 1;
    if (row.id !== "prompt.peer" && (row.steps !== turns || row.defaults?.steps !== turns || row.events.some((e) => !e.ok))) {
      throw new Error(`${row.id}: ${row.steps} turns (expected ${turns}); events: ${JSON.stringify(row.events)}`);
    }
    log(
      `${row.id}: ${row.steps} turns, ${row.totalTokens} o200k prompt tokens, within-run share ${(row.withinRun.mean * 100).toFixed(1)}%`,
    );
    rows.push(row);
  }
  const wasm = await measureWasmModule(repo, quick ? 3 : 20);
  log(`wasm module: ${wasm.gzipBytes} bytes gzip, cold start ${wasm.coldStartMs.toFixed(1)} ms (median of ${wasm.coldStartRuns.length})`);
  const workerd = await measureWorkerd(repo, quick ? 1 : 5);
  log(`workerd: ready ${workerd.readyMs.toFixed(0)} ms, first request ${workerd.firstRequestMs.toFixed(1)} ms`);
  return { date: new Date().toISOString(), rows, wasm, workerd };
}
