/**
 * Server-sent events: the `data` of each event of a byte stream, parsed by `eventsource-parser`
 * (so `\n`, `\r\n` and lone `\r` line endings, comments, multi-line data, `event:`/`id:`/`retry:`
 * fields and chunks cut anywhere — even inside a UTF-8 sequence — all follow the spec).
 * @module
 */
import { createParser } from "eventsource-parser";

/** Options of {@link readSseData}. */
export interface ReadSseOptions {
  /** Cancels the read; the generator then ends (the caller checks the signal). */
  signal?: AbortSignal;
  /** Called after every chunk read from the body (used to restart an idle timeout). */
  onChunk?: () => void;
}

/**
 * Yields each event's data (several `data:` lines of one event joined by `\n`). An event still
 * pending when the stream ends (no closing blank line) is yielded too, for lenient servers.
 * Stopping early or `signal` firing cancels the body.
 */
export async function* readSseData(body: ReadableStream<Uint8Array>, options: ReadSseOptions = {}): AsyncGenerator<string> {
  const { signal, onChunk } = options;
  const reader = body.getReader();
  const onAbort = () => void reader.cancel(signal?.reason).catch(() => undefined);
  signal?.addEventListener("abort", onAbort, { once: true });
  const decoder = new TextDecoder();
  const ready: string[] = [];
  const parser = createParser({ onEvent: (event) => ready.push(event.data) });
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (signal?.aborted) return;
      onChunk?.();
      parser.feed(done ? `${decoder.decode()}\n\n` : decoder.decode(value, { stream: true }));
      while (ready.length > 0) yield ready.shift() as string;
      if (done) break;
    }
    finished = true;
  } finally {
    signal?.removeEventListener("abort", onAbort);
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
