/**
 * A backend wrapper that records every change to memory files (AGENTS.md sources) in a
 * {@link MemoryHistory}, and the restore function that reverts such a change through a backend.
 * @module
 */
import type { Backend, ExecuteOptions } from "../../backends/protocol.js";
import { wrapBackend } from "../../backends/wrap.js";
import { redactSecrets } from "../longterm/redact.js";
import type { MemoryActor, MemoryHistory, RestoreFn } from "./history.js";

/** Options of {@link recordMemoryChanges}. */
export interface RecordMemoryChangesOptions {
  history: MemoryHistory;
  /** The memory files to watch (normalised absolute paths, e.g. `/memories/AGENTS.md`). */
  paths: readonly string[];
  userId: string;
  threadId?: string;
  runId?: string;
  /** Default: `"agent"`. */
  actor?: MemoryActor;
}

const decoder = new TextDecoder();

async function text(backend: Backend, path: string): Promise<string | null> {
  const r = await backend.readBytes(path);
  return r.error ? null : decoder.decode(r.data);
}

/**
 * Wraps `backend` so that `write`, `append`, `edit` and `delete` of a watched path, and every
 * command (`execute`) that changes one, record the text before and after in the history. Other paths and all reads pass straight through. A change made by
 * someone else between the read of "before" and the write is attributed to this change.
 */
export function recordMemoryChanges(backend: Backend, options: RecordMemoryChangesOptions): Backend {
  const watched = new Set(options.paths);
  const record = async (path: string, before: string | null) => {
    await options.history.record({
      userId: options.userId,
      kind: "agents_md",
      target: path,
      actor: options.actor ?? "agent",
      ...(options.threadId !== undefined && { threadId: options.threadId }),
      ...(options.runId !== undefined && { runId: options.runId }),
      before,
      after: await text(backend, path),
    });
  };
  const tracked =
    <A extends unknown[], R extends { error?: unknown }>(op: (path: string, ...rest: A) => Promise<R>) =>
    async (path: string, ...rest: A): Promise<R> => {
      if (!watched.has(path)) return op.call(backend, path, ...rest);
      const before = await text(backend, path);
      const result = await op.call(backend, path, ...rest);
      if (!result.error) await record(path, before);
      return result;
    };
  // A command writes files behind the backend's methods: what it changed in a watched file is
  // recorded after it, as one change per file.
  const inner = backend.execute;
  const execute = inner
    ? async (command: string, opts?: ExecuteOptions) => {
        const before = await Promise.all([...watched].map(async (path) => [path, await text(backend, path)] as const));
        const result = await inner.call(backend, command, opts);
        for (const [path, was] of before) if ((await text(backend, path)) !== was) await record(path, was);
        return result;
      }
    : undefined;
  return wrapBackend(backend, {
    ...(execute && { execute }),
    write: tracked(backend.write),
    edit: tracked(backend.edit),
    delete: tracked(backend.delete),
    ...(backend.append && { append: tracked(backend.append) }),
  });
}

/**
 * A {@link RestoreFn} that writes through a backend, compare-and-swap on the file's version:
 * the file must still hold (once redacted) what the change left.
 */
export function restoreThrough(backend: Backend): RestoreFn {
  return async (target, content, expected) => {
    const stat = await backend.stat(target);
    const current = stat.error ? null : await text(backend, target);
    if ((current === null ? null : redactSecrets(current)) !== expected) return false;
    if (content === null) return !(await backend.delete(target)).error;
    const version = stat.error ? undefined : (stat.info as { version?: string }).version;
    // A target that did not exist must still not exist ("0").
    const r = await backend.write(target, content, { ifVersion: version ?? "0" });
    return !r.error;
  };
}
