/**
 * The backend an agent's run works through, with the rules of writes to its memory sources
 * applied in their order: changes recorded (when a history is configured), every write
 * redacted, and the sources checked again after each command.
 * @module
 */
import type { Backend } from "../../backends/protocol.js";
import type { Core } from "../../core/types.js";
import { memorySourceOf } from "./paths.js";
import { type HistoryScope, recordingBackend } from "./record.js";
import { redactAfterCommands, redactMemoryWrites } from "./redact.js";

/** `backend` with the memory `sources`' write rules applied; `history`: where and as whom their
 * changes are recorded (none: not recorded). */
export function memorySourceBackend(
  backend: Backend,
  core: Core,
  sources: readonly string[],
  history?: Omit<HistoryScope, "sources">,
): Backend {
  let out = history ? recordingBackend(backend, core, { ...history, sources }) : backend;
  // Outside the recording, so that the history sees the text as stored.
  out = redactMemoryWrites(out, core, memorySourceOf(sources, core));
  // A command changes files behind the methods redacted above: the sources are checked after it.
  return redactAfterCommands(out, core, sources);
}
