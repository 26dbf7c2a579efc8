/**
 * The `memoryHistory` option: the backend a run's tools use records every change to the memory
 * sources in a {@link MemoryHistory}, with the user, thread and run that made it.
 * @module
 */
import type { Backend } from "../../backends/protocol.js";
import { wrapBackend } from "../../backends/wrap.js";
import type { Core } from "../../core/types.js";
import type { MemoryHistory } from "../history/history.js";
import { recordMemoryChanges } from "../history/recording-backend.js";
import { normalOf } from "./paths.js";

/** What one run records changes as. */
export interface HistoryScope {
  history: MemoryHistory;
  /** The memory sources, as configured (normalised here). */
  sources: readonly string[];
  userId: string;
  threadId: string;
  runId: string;
}

/**
 * `backend` with changes to the memory sources recorded. Paths of `write`, `edit` and `delete`
 * are normalised by the core first, so `/./AGENTS.md` or `AGENTS.md` is recorded as
 * `/AGENTS.md` — the same rule the backends apply.
 */
export function recordingBackend(backend: Backend, core: Core, scope: HistoryScope): Backend {
  const normal = normalOf(core);
  const recorded = recordMemoryChanges(backend, {
    history: scope.history,
    paths: scope.sources.map(normal),
    userId: scope.userId,
    threadId: scope.threadId,
    runId: scope.runId,
  });
  const append = recorded.append;
  return wrapBackend(recorded, {
    write: (path, ...rest) => recorded.write(normal(path), ...rest),
    edit: (path, ...rest) => recorded.edit(normal(path), ...rest),
    delete: (path) => recorded.delete(normal(path)),
    ...(append && { append: (path, ...rest) => append(normal(path), ...rest) }),
  });
}
