/**
 * `FilePendingWork`: pending extraction work as one JSON file per entry (Node only), written
 * through a sandboxed {@link FilesystemBackend} — so writes are engram-fs's atomic replace (a
 * killed process leaves an old entry or a new one, never half of one) and no TypeScript copy of
 * that rule exists. Unreadable files are skipped.
 * @module
 */
import { mkdir } from "node:fs/promises";
import { FilesystemBackend } from "../../backends/filesystem.js";
import { EngramError } from "../../errors.js";
import { type PendingEntry, type PendingWorkStore, parsePendingEntry } from "./pending.js";

const ENTRY_FILE = /^p[0-9a-z]{9}-[0-9a-f]{12}\.json$/;

/** Options of {@link FilePendingWork}. */
export interface FilePendingWorkOptions {
  /** The directory of the entries; created on the first use. Required. */
  dir: string;
}

/** Pending work in `dir/<id>.json` files. */
export class FilePendingWork implements PendingWorkStore {
  readonly durable = true;
  readonly dir: string;
  #backend: Promise<FilesystemBackend> | undefined;

  constructor(options: FilePendingWorkOptions) {
    this.dir = options.dir;
  }

  #files(): Promise<FilesystemBackend> {
    this.#backend ??= mkdir(this.dir, { recursive: true }).then(
      () => new FilesystemBackend({ rootDir: this.dir, respectGitignore: false }),
    );
    return this.#backend;
  }

  #path(id: string): string {
    if (!ENTRY_FILE.test(`${id}.json`)) throw new EngramError("invalid_argument", `invalid pending entry id ${JSON.stringify(id)}`);
    return `/${id}.json`;
  }

  async put(entry: PendingEntry): Promise<void> {
    const r = await (await this.#files()).write(this.#path(entry.id), JSON.stringify(entry));
    if (r.error) throw EngramError.fromCore(r.error);
  }

  async list(): Promise<PendingEntry[]> {
    const files = await this.#files();
    const listed = await files.ls("/");
    const out: PendingEntry[] = [];
    for (const { path } of (listed.entries ?? []).filter((e) => !e.isDir && ENTRY_FILE.test(e.path.slice(1)))) {
      const r = await files.readBytes(path);
      if (r.error) continue; // gone meanwhile
      try {
        const entry = parsePendingEntry(JSON.parse(new TextDecoder().decode(r.data)));
        if (entry && `/${entry.id}.json` === path) out.push(entry);
      } catch {
        // Unreadable: skipped.
      }
    }
    return out;
  }

  async delete(id: string): Promise<void> {
    const r = await (await this.#files()).delete(this.#path(id));
    if (r.error && r.error.code !== "file_not_found") throw EngramError.fromCore(r.error);
  }
}
