/**
 * Closing an agent when the process is told to stop, so pending long-term memory work is
 * flushed instead of lost (for CLIs and servers).
 * @module
 */
import type { DeepAgent } from "./create.js";

/** What {@link closeOnSignals} needs of the process (Node's `process`). */
export interface SignalProcess {
  once(signal: string, listener: () => void): unknown;
  removeListener(signal: string, listener: () => void): unknown;
  exit(code?: number): never;
}

const EXIT_CODES: Record<string, number> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

/**
 * On the first of `signals`, awaits `agent.close()` (flushing pending long-term memory), then
 * exits with the conventional code (128 + signal number). Returns a function that removes the
 * handlers. Default signals: `SIGINT`, `SIGTERM`.
 */
export function closeOnSignals(
  agent: Pick<DeepAgent, "close">,
  signals: string[] = ["SIGINT", "SIGTERM"],
  proc: SignalProcess = (globalThis as unknown as { process: SignalProcess }).process,
): () => void {
  const handlers = signals.map((signal) => {
    const handler = () => {
      remove();
      agent.close().then(
        () => proc.exit(EXIT_CODES[signal] ?? 1),
        () => proc.exit(1),
      );
    };
    proc.once(signal, handler);
    return [signal, handler] as const;
  });
  const remove = () => {
    for (const [signal, handler] of handlers) proc.removeListener(signal, handler);
  };
  return remove;
}
