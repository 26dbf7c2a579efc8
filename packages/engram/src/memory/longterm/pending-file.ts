/**
 * `FilePendingWork`: pending extraction work as one JSON file per entry (Node only). Writes are
 * atomic (temp file, then rename), so a killed process leaves an old entry or a new one, never
 * half of one; unreadable files are skipped.
 * @module
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, readdir, rename, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type PendingEntry, type PendingWorkStore, parsePendingEntry } from "./pending.js";

const ENTRY_FILE = /^p[0-9a-z]{9}-[0-9a-f]{12}\.json$/;

/** Options of {@link FilePendingWork}. */
export interface FilePendingWorkOptions {
  /** The directory of the entries; created on the first put. Required. */
  dir: string;
}

/** Pending work in `dir/<id>.json` files. */
export class FilePendingWork implements PendingWorkStore {
  readonly durable = true;
  readonly dir: string;

  constructor(options: FilePendingWorkOptions) {
    this.dir = options.dir;
  }

  #file(id: string): string {
    if (!ENTRY_FILE.test(`${id}.json`)) throw new TypeError(`invalid pending entry id ${JSON.stringify(id)}`);
    return join(this.dir, `${id}.json`);
  }

  async put(entry: PendingEntry): Promise<void> {
    const file = this.#file(entry.id);
    await mkdir(this.dir, { recursive: true });
    const tmp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
    await writeFile(tmp, JSON.stringify(entry));
    await rename(tmp, file);
  }

  async list(): Promise<PendingEntry[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw e;
    }
    const out: PendingEntry[] = [];
    for (const name of names.filter((n) => ENTRY_FILE.test(n)).sort()) {
      try {
        const entry = parsePendingEntry(JSON.parse(await readFile(join(this.dir, name), "utf8")));
        if (entry && `${entry.id}.json` === name) out.push(entry);
      } catch {
        // Gone meanwhile or unreadable: skipped.
      }
    }
    return out;
  }

  async delete(id: string): Promise<void> {
    try {
      await unlink(this.#file(id));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
  }
}
