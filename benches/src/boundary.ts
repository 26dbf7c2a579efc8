/**
 * The boundary's small and bulk State calls: a read of a small file, and loading the
 * whole corpus into a fresh StateBackend in one call — ours (native and WASM) against the peer.
 * The peer's load is what its StateBackend needs to serve the files: its `files` state object;
 * the load's floor is plain JS encoding the same texts to UTF-8 once.
 */
import { StateBackend as PeerState } from "deepagents";
import { type Core, StateBackend } from "engram";
import type { Corpus } from "./corpus.js";
import { type Checked, type MeasureOptions, QUICK, STEADY, timeChecked } from "./measure.js";
import type { Outcome, WorkloadResult } from "./results.js";
import type { Role } from "./subjects.js";

const SMALL = "/memories/preferences.md";
const SMALL_CONTENT = "# Preferences\n- dark mode\n- answers in English\n";

type Subjects = [Role, string, () => Promise<() => Promise<unknown>>, (answer: unknown) => boolean][];

async function row(id: string, title: string, subjects: Subjects, o: MeasureOptions): Promise<WorkloadResult> {
  const list: Checked[] = [];
  for (const [, label, prepare, check] of subjects) {
    try {
      const call = await prepare();
      const answer = await call();
      list.push(check(answer) ? { label, call } : { label, note: `wrong answer: ${String(answer)}` });
    } catch (e) {
      list.push({ label, note: `failed: ${(e as Error).message}` });
    }
  }
  const timed = await timeChecked(list, o);
  const outcomes: WorkloadResult["outcomes"] = {};
  subjects.forEach(([role], i) => {
    outcomes[role] = timed[i] as Outcome;
  });
  return { id, title, kind: "state", outcomes, maxRssKb: process.resourceUsage().maxRSS };
}

/** `state.read-small` and `state.load`, when wanted. */
export async function boundaryRows(
  cores: Core[],
  corpus: Corpus,
  wanted: (id: string) => boolean,
  quick: boolean,
): Promise<WorkloadResult[]> {
  const rows: WorkloadResult[] = [];
  const small = quick ? QUICK : STEADY;
  // A load allocates tens of MB per subject, so a sample's time swings with the collector (run 6:
  // 11.7–32.8 ms for ours, 2.5–17.8 ms for the peer); fifteen samples steady the medians.
  const big = quick ? { warmup: 0, samples: 3, minSampleMs: 0, budgetMs: 200 } : { warmup: 1, samples: 15, minSampleMs: 0, budgetMs: 8000 };
  const ours = (core: Core): Role => (core.kind === "native" ? "ours-native" : "ours-wasm");
  const list = corpus.files.map((f) => [f.path, f.content] as const);
  const now = new Date().toISOString();
  const peerFiles = () => {
    const files: Record<string, { content: string; mimeType: string; created_at: string; modified_at: string }> = {};
    for (const f of corpus.files) files[f.path] = { content: f.content, mimeType: "text/plain", created_at: now, modified_at: now };
    return files;
  };
  if (wanted("state.read-small")) {
    const subjects: Subjects = cores.map((core) => [
      ours(core),
      `engram (${core.kind})`,
      async () => {
        const b = new StateBackend({ core });
        await b.writeMany(list);
        await b.write(SMALL, SMALL_CONTENT);
        return async () => (await b.read(SMALL)).content;
      },
      (a) => a === SMALL_CONTENT.slice(0, -1),
    ]);
    subjects.push([
      "peer",
      "deepagents 1.14.1",
      async () => {
        const files = peerFiles();
        files[SMALL] = { content: SMALL_CONTENT, mimeType: "text/plain", created_at: now, modified_at: now };
        const b = new PeerState({ state: { files } } as never) as unknown as { read(p: string): Promise<{ content?: unknown }> };
        return async () => (await b.read(SMALL)).content;
      },
      (a) => typeof a === "string" && a.includes("dark mode"),
    ]);
    rows.push(await row("state.read-small", "read a small file (3 lines)", subjects, small));
  }
  if (wanted("state.load")) {
    const subjects: Subjects = cores.map((core) => [
      ours(core),
      `engram (${core.kind})`,
      async () => async () => {
        const b = new StateBackend({ core });
        const r = await b.writeMany(list);
        return r.written;
      },
      (a) => a === list.length,
    ]);
    subjects.push([
      "peer",
      "deepagents 1.14.1",
      async () => async () => {
        const files = peerFiles();
        new PeerState({ state: { files } } as never);
        return Object.keys(files).length;
      },
      (a) => a === list.length,
    ]);
    // The floor: the cheapest copy of the same texts plain JS can make, each encoded to UTF-8
    // into one fresh buffer (what any table that owns its bytes must at least do). The peer
    // copies nothing: its state object points at the caller's strings.
    const texts = corpus.files.map((f) => f.content);
    const units = texts.reduce((n, t) => n + t.length, 0);
    const utf8Bytes = texts.reduce((n, t) => n + Buffer.byteLength(t, "utf8"), 0);
    const encoder = new TextEncoder();
    subjects.push([
      "floor",
      "plain JS (TextEncoder into one buffer)",
      async () => async () => {
        const out = new Uint8Array(units * 3);
        let used = 0;
        for (const t of texts) used += encoder.encodeInto(t, out.subarray(used)).written;
        return used;
      },
      (a) => a === utf8Bytes,
    ]);
    rows.push(
      await row("state.load", `load ${list.length.toLocaleString("en-US")} files into a new StateBackend (one call)`, subjects, big),
    );
  }
  return rows;
}
