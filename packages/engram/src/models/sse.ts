/**
 * A minimal server-sent-events reader: yields the `data` of each event of a byte stream, as
 * chat-completions servers send them (`data: {...}` lines separated by blank lines).
 * @module
 */

/**
 * Yields each event's data (several `data:` lines of one event joined by `\n`). Comments,
 * `event:`, `id:` and `retry:` fields are ignored; `\n` and `\r\n` line endings are accepted.
 * An event still pending when the stream ends is yielded. Stopping early cancels the stream;
 * so does `signal` firing (the generator then ends without yielding more, and the caller
 * checks the signal).
 */
export async function* readSseData(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<string> {
  const reader = body.getReader();
  const onAbort = () => void reader.cancel(signal?.reason).catch(() => undefined);
  signal?.addEventListener("abort", onAbort, { once: true });
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (signal?.aborted) return;
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let start = 0;
      let newline = buffer.indexOf("\n");
      while (newline >= 0) {
        const line = buffer.slice(start, buffer.charCodeAt(newline - 1) === 13 ? newline - 1 : newline);
        start = newline + 1;
        if (line === "") {
          if (data.length > 0) yield data.join("\n");
          data = [];
        } else if (line.startsWith("data:")) {
          data.push(fieldValue(line));
        }
        newline = buffer.indexOf("\n", start);
      }
      buffer = buffer.slice(start);
      if (done) break;
    }
    const last = buffer.replace(/\r$/, "");
    if (last.startsWith("data:")) data.push(fieldValue(last));
    if (data.length > 0) yield data.join("\n");
    finished = true;
  } finally {
    signal?.removeEventListener("abort", onAbort);
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** The value of a `data:` line, without the one optional space after the colon. */
function fieldValue(line: string): string {
  return line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
}
