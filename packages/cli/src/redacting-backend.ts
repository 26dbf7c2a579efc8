/**
 * A backend whose memory files never keep a secret: what the agent writes into them (a
 * `write_file`, an `edit_file`, an append) passes `redactSecrets` before it is stored, like
 * everything `engram memory` writes. The `engram` command wraps the user's `/memories/` route in
 * it, and the project's `AGENTS.md` under `--root --write`. Reads pass through.
 * @module
 */
import {
  type Backend,
  type BackendEditOptions,
  type BackendGlobOptions,
  type BackendGrepOptions,
  type BackendWriteOptions,
  type ReadOptions,
  type ToolTextRequest,
  loadCore,
  redactSecrets,
} from "engram";

const strict = new TextDecoder("utf-8", { fatal: true });
const lenient = new TextDecoder();

/** `content` without secrets; the same value when there were none. Bytes are redacted as UTF-8
 * text (bytes that are not UTF-8 are kept unless a secret shows through them). */
async function redact(content: string | Uint8Array): Promise<string | Uint8Array> {
  await loadCore(); // redactSecrets runs in the core, synchronously: have it loaded (either build)
  if (typeof content === "string") return redactSecrets(content);
  let text: string;
  try {
    text = strict.decode(content);
  } catch {
    text = lenient.decode(content);
  }
  const clean = redactSecrets(text);
  return clean === text ? content : clean;
}

/** Wraps `inner` so that writes to the paths `applies` accepts (all by default) are redacted. */
export class RedactingBackend implements Backend {
  readonly #inner: Backend;
  readonly #applies: (path: string) => boolean;

  constructor(inner: Backend, applies: (path: string) => boolean = () => true) {
    this.#inner = inner;
    this.#applies = applies;
  }

  ls(path: string) {
    return this.#inner.ls(path);
  }
  read(path: string, options?: ReadOptions) {
    return this.#inner.read(path, options);
  }
  readBytes(path: string) {
    return this.#inner.readBytes(path);
  }
  grep(pattern: string, options?: BackendGrepOptions) {
    return this.#inner.grep(pattern, options);
  }
  glob(pattern: string, options?: BackendGlobOptions) {
    return this.#inner.glob(pattern, options);
  }
  stat(path: string) {
    return this.#inner.stat(path);
  }
  delete(path: string) {
    return this.#inner.delete(path);
  }
  toolText(request: ToolTextRequest, maxChars: number) {
    return this.#inner.toolText ? this.#inner.toolText(request, maxChars) : Promise.resolve(undefined);
  }

  // No `append`: callers append by read + write (compare-and-swap on the version), so the whole
  // file passes `write` and a secret split across two appends is still found.

  async write(path: string, content: string | Uint8Array, options?: BackendWriteOptions) {
    return this.#inner.write(path, this.#applies(path) ? await redact(content) : content, options);
  }

  async edit(path: string, oldString: string, newString: string, options?: BackendEditOptions) {
    if (!this.#applies(path)) return this.#inner.edit(path, oldString, newString, options);
    await loadCore();
    const r = await this.#inner.edit(path, oldString, redactSecrets(newString), options);
    if (r.error) return r;
    // The replacement may complete a secret with the text around it: redact the whole file,
    // compare-and-swap on the version the edit left.
    const bytes = await this.#inner.readBytes(path);
    if (bytes.error) return r;
    const clean = await redact(bytes.data);
    if (clean === bytes.data) return r;
    const w = await this.#inner.write(path, clean, { ifVersion: r.version });
    return w.error ? { error: w.error } : { ...r, version: w.version };
  }
}
