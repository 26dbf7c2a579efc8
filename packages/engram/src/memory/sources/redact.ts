/**
 * Memory files never keep a secret: what the agent writes into a memory source (`write_file`,
 * `edit_file`, an append) passes the core's redactor before it is stored, as every other memory
 * write path does (facts, summaries, history).
 * @module
 */
import { coreRef } from "../../backends/core-ref.js";
import type { Backend, BackendEditOptions, BackendWriteOptions, ExecuteOptions } from "../../backends/protocol.js";
import { wrapBackend } from "../../backends/wrap.js";
import type { Core } from "../../core/types.js";
import { memoryTarget } from "./paths.js";

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
 * `backend` with every write to the memory files (`memory`: the source paths, or a predicate
 * on paths; default: every file) redacted by the core's `redactSecrets`, the redactor of every
 * memory write path. Agents apply it to their memory sources; the `engram` command also to its
 * whole `/memories/` route. A write is a memory write by the file it reaches (see
 * {@link Backend.realPath}): with a predicate, when it names the path given or the path
 * reached; with source paths, when the path given or reached is a source's, or reaches the
 * same file as one (see `memoryTarget`).
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
  memory: ((path: string) => boolean) | readonly string[] = () => true,
): Backend {
  const core = coreRef(source);
  const target = memoryTarget(backend, core, memory);
  const write = async (path: string, content: string | Uint8Array, options?: BackendWriteOptions) => {
    const to = await target(path);
    return to === undefined ? backend.write(path, content, options) : backend.write(to, redacted(await core(), content), options);
  };
  const edit = async (path: string, oldString: string, newString: string, options?: BackendEditOptions) => {
    const to = await target(path);
    if (to === undefined) return backend.edit(path, oldString, newString, options);
    const c = await core();
    const r = await backend.edit(to, oldString, c.redactSecrets(newString).text, options);
    if (r.error) return r;
    const bytes = await backend.readBytes(to);
    if (bytes.error) return r;
    const clean = redacted(c, bytes.data);
    if (clean === bytes.data) return r;
    const w = await backend.write(to, clean, { ifVersion: r.version });
    return w.error ? { error: w.error } : { ...r, version: w.version };
  };
  const inner = backend.append;
  const append = inner
    ? async (path: string, content: string | Uint8Array) => {
        const to = await target(path);
        if (to === undefined) return inner.call(backend, path, content);
        // Compare-and-swap on what was read: the version, or "0" (the file must still not exist).
        const stat = await backend.stat(to);
        if (stat.error && stat.error.code !== "file_not_found") return { error: stat.error };
        const before = stat.error ? undefined : await backend.readBytes(to);
        if (before?.error) return { error: before.error };
        const added = typeof content === "string" ? new TextEncoder().encode(content) : content;
        const whole = new Uint8Array((before?.data.byteLength ?? 0) + added.byteLength);
        if (before) whole.set(before.data);
        whole.set(added, before?.data.byteLength ?? 0);
        const ifVersion = stat.error ? "0" : stat.info.version;
        return backend.write(to, redacted(await core(), whole), ifVersion === undefined ? {} : { ifVersion });
      }
    : undefined;
  return wrapBackend(backend, { write, edit, ...(append && { append }) });
}

/** How many times a redaction after a command retries when the file changes under it. */
const COMMAND_REDACT_ATTEMPTS = 3;

/**
 * `backend` whose commands ({@link Backend.execute}) leave no secret in the memory `sources`: a
 * command writes files without passing {@link redactMemoryWrites}, so after each one every
 * source whose text holds a secret is written back redacted — through `backend`, so the layers
 * beneath (the redactor, the history) see the write — compare-and-swap on the version read.
 * The command's processes have all ended when `execute` returns (the sandbox's PID namespace),
 * so nothing writes the file after the check. A backend without `execute` is returned as is.
 */
export function redactAfterCommands(backend: Backend, source: Core | Promise<Core>, sources: readonly string[]): Backend {
  const inner = backend.execute;
  if (!inner || sources.length === 0) return backend;
  const core = coreRef(source);
  const scrub = async (path: string): Promise<void> => {
    for (let attempt = 0; attempt < COMMAND_REDACT_ATTEMPTS; attempt++) {
      const stat = await backend.stat(path);
      if (stat.error) return;
      const bytes = await backend.readBytes(path);
      if (bytes.error) return;
      const clean = redacted(await core(), bytes.data);
      if (clean === bytes.data) return;
      const version = (stat.info as { version?: string }).version;
      const w = await backend.write(path, clean, version === undefined ? {} : { ifVersion: version });
      if (w.error?.code !== "conflict") return;
    }
  };
  const execute = async (command: string, options?: ExecuteOptions) => {
    const result = await inner.call(backend, command, options);
    for (const path of sources) await scrub(path);
    return result;
  };
  return wrapBackend(backend, { execute });
}
