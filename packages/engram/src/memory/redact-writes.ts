/**
 * Memory files never keep a secret: what the agent writes into a memory source (`write_file`,
 * `edit_file`, an append) passes the core's redactor before it is stored, as every other memory
 * write path does (facts, summaries, history).
 * @module
 */
import { coreRef } from "../backends/core-ref.js";
import type { Backend, BackendEditOptions, BackendWriteOptions } from "../backends/protocol.js";
import { wrapBackend } from "../backends/wrap.js";
import type { Core } from "../core/types.js";

const strict = new TextDecoder("utf-8", { fatal: true });
const lenient = new TextDecoder();

/** `content` with its secrets redacted; the same value when it held none. Bytes are redacted as
 * UTF-8 text (bytes that are not UTF-8 are kept unless a secret shows through them). */
function redacted(core: Core, content: string | Uint8Array): string | Uint8Array {
  if (typeof content === "string") return core.redactSecrets(content).text;
  let text: string;
  try {
    text = strict.decode(content);
  } catch {
    text = lenient.decode(content);
  }
  const r = core.redactSecrets(text);
  return r.count === 0 ? content : r.text;
}

/**
 * `backend` with every write to the files `isMemory` names (default: all) redacted by the core's
 * `redactSecrets`, the redactor of every memory write path. Agents apply it to their memory
 * sources; the `engram` command also to its whole `/memories/` route.
 *
 * A write is redacted whole. An edit's new text is redacted, and then the whole file once more
 * (compare-and-swap on the version the edit left), since the new text may complete a secret
 * with what surrounds it. An append is made as a write of the whole file (compare-and-swap on
 * the version read: a `conflict` when the file changed meanwhile), so a secret split across
 * appends is found. Other files and every read pass straight through.
 */
export function redactMemoryWrites(
  backend: Backend,
  source: Core | Promise<Core>,
  isMemory: (path: string) => boolean = () => true,
): Backend {
  const core = coreRef(source);
  const write = async (path: string, content: string | Uint8Array, options?: BackendWriteOptions) =>
    backend.write(path, isMemory(path) ? redacted(await core(), content) : content, options);
  const edit = async (path: string, oldString: string, newString: string, options?: BackendEditOptions) => {
    if (!isMemory(path)) return backend.edit(path, oldString, newString, options);
    const c = await core();
    const r = await backend.edit(path, oldString, c.redactSecrets(newString).text, options);
    if (r.error) return r;
    const bytes = await backend.readBytes(path);
    if (bytes.error) return r;
    const clean = redacted(c, bytes.data);
    if (clean === bytes.data) return r;
    const w = await backend.write(path, clean, { ifVersion: r.version });
    return w.error ? { error: w.error } : { ...r, version: w.version };
  };
  const inner = backend.append;
  const append = inner
    ? async (path: string, content: string | Uint8Array) => {
        if (!isMemory(path)) return inner.call(backend, path, content);
        // Compare-and-swap on what was read: the version, or "0" (the file must still not exist).
        const stat = await backend.stat(path);
        if (stat.error && stat.error.code !== "file_not_found") return { error: stat.error };
        const before = stat.error ? undefined : await backend.readBytes(path);
        if (before?.error) return { error: before.error };
        const added = typeof content === "string" ? new TextEncoder().encode(content) : content;
        const whole = new Uint8Array((before?.data.byteLength ?? 0) + added.byteLength);
        if (before) whole.set(before.data);
        whole.set(added, before?.data.byteLength ?? 0);
        const ifVersion = stat.error ? "0" : stat.info.version;
        return write(path, whole, ifVersion === undefined ? {} : { ifVersion });
      }
    : undefined;
  return wrapBackend(backend, { write, edit, ...(append && { append }) });
}
