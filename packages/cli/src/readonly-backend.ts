/**
 * A read-only view of a backend: reads and searches pass through, every write, edit, append and
 * delete returns `permission_denied` (as data, like every backend error). The `engram` command
 * wraps `--root` in it unless `--write` is given. An `execute` of the inner backend passes
 * through too: the backend it wraps must run its commands read-only (the command makes its
 * `FilesystemBackend` so).
 * @module
 */
import type { Backend, Core, ExecuteOptions } from "engram";
import { type BackendEditOptions, type BackendGlobOptions, type BackendGrepOptions, type ReadOptions, capability } from "engram/kit";

const DETAIL = "the directory is read-only (start engram with --write to allow changes)";

/** Wraps `inner` so that nothing can change through it. */
export class ReadOnlyBackend implements Backend {
  readonly #inner: Backend;
  readonly #core: Promise<Core>;

  declare readonly execute?: Backend["execute"];
  /** Forwarded with `execute` (see `commandsConfined` in engram/kit's capabilities). */
  declare readonly commandsConfined?: () => boolean;

  constructor(inner: Backend, core: Core | Promise<Core>) {
    this.#inner = inner;
    this.#core = Promise.resolve(core);
    const run = inner.execute;
    if (typeof run === "function") {
      Object.defineProperty(this, "execute", {
        configurable: true,
        value: (command: string, options?: ExecuteOptions) => run.call(inner, command, options),
      });
      const confined = capability(inner, "commandsConfined");
      if (confined) Object.defineProperty(this, "commandsConfined", { configurable: true, value: confined });
    }
  }

  async #denied(path: string) {
    return { error: (await this.#core).errorData("permission_denied", path, DETAIL) };
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
  write(path: string) {
    return this.#denied(path);
  }
  append(path: string) {
    return this.#denied(path);
  }
  edit(path: string, _old: string, _new: string, _options?: BackendEditOptions) {
    return this.#denied(path);
  }
  delete(path: string) {
    return this.#denied(path);
  }
}
