/**
 * The implementations measured side by side, behind one small interface: ours (native and WASM
 * cores), the `deepagents` peer, and the floor (ripgrep / find / plain JS over the same data).
 * The `store-sqlite` and `store-postgres` kinds put a database under the Store backends (ours:
 * `@engram/sqlite`, `@engram/postgres`; the peer: LangGraph's own PostgresStore).
 */
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import {
  CompositeBackend as PeerComposite,
  FilesystemBackend as PeerFilesystem,
  StateBackend as PeerState,
  StoreBackend as PeerStore,
} from "deepagents";
import { InMemoryStore as PeerInMemoryStore } from "@langchain/langgraph";
import { type Backend, CompositeBackend, type Core, FilesystemBackend, InMemoryStore, StateBackend, StoreBackend } from "engram";
import type { Corpus } from "./corpus.js";
import { type DbKind, forEachLimited, isDbKind, openEngramStore, openPeerStore } from "./databases.js";

export type Kind = "state" | "store" | DbKind | "filesystem" | "composite";
/** Every kind, in the order the harness runs and the report lists them. */
export const KINDS: readonly Kind[] = ["state", "store", "store-sqlite", "store-postgres", "filesystem", "composite"];
/** The core's ceiling on matching lines per grep (`MAX_COUNT` in crates/engram-core/src/grep/options.rs). */
export const GREP_CEILING = 10_000;
/** How many writes load a database-backed subject's corpus at once. */
const LOAD_CONCURRENCY = 8;
export type Role = "ours-native" | "ours-wasm" | "peer" | "floor";

/** What every workload needs; `undefined` members mean "not offered by this subject". */
export interface Subject {
  role: Role;
  label: string;
  grepLines(pattern: string, regex: boolean, ignoreCase?: boolean): Promise<number>;
  /** The most matching lines one grep returns, when the subject caps it (marking the result truncated). */
  grepCap?: number;
  globCount(pattern: string): Promise<number>;
  lsCount?(dir: string): Promise<number>;
  readFirst(path: string, offset: number, limit: number): Promise<string>;
  edit(path: string, from: string, to: string): Promise<boolean>;
  write(path: string, content: string): Promise<boolean>;
  /** A read of a small file behind the composite route (composite only). */
  routedRead?(path: string): Promise<string>;
  /** Releases what the subject holds (connections, its database). */
  close?(): Promise<void>;
}

export const ROUTED_FILE = "/memories/preferences.md";
const ROUTED_CONTENT = "# Preferences\n- dark mode\n- answers in English\n";

/** Our backends on one core. */
export async function oursSubject(kind: Kind, core: Core, corpus: Corpus, diskRoot: string): Promise<Subject> {
  let backend: Backend;
  let close: (() => Promise<void>) | undefined;
  if (kind === "filesystem") {
    backend = new FilesystemBackend({ rootDir: diskRoot, core, respectGitignore: false });
  } else if (isDbKind(kind)) {
    const db = await openEngramStore(kind, core.kind);
    close = db.close;
    backend = new StoreBackend({ store: db.store, namespace: ["bench"], core });
    try {
      await forEachLimited(corpus.files, LOAD_CONCURRENCY, async (f) => {
        const r = await backend.write(f.path, f.content);
        if (r.error) throw new Error(`loading ${f.path}: ${r.error.message}`);
      });
    } catch (e) {
      await close();
      throw e;
    }
  } else {
    const base =
      kind === "store" ? new StoreBackend({ store: new InMemoryStore(), namespace: ["bench"], core }) : new StateBackend({ core });
    for (const f of corpus.files) await base.write(f.path, f.content);
    if (kind === "composite") {
      const memories = new StoreBackend({ store: new InMemoryStore(), namespace: ["memories"], core });
      backend = new CompositeBackend(base, { "/memories/": memories }, { core });
      await backend.write(ROUTED_FILE, ROUTED_CONTENT);
    } else {
      backend = base;
    }
  }
  const role: Role = core.kind === "native" ? "ours-native" : "ours-wasm";
  return {
    role,
    label: `engram (${core.kind})`,
    grepLines: async (pattern, regex, ignoreCase = false) => {
      const r = await backend.grep(pattern, { regex, ignoreCase, outputMode: "content" });
      const n = r.matches?.length ?? -1;
      // Stopping early must be said: a truncated result holds exactly the ceiling.
      return r.truncated && n !== GREP_CEILING ? -1 : n;
    },
    grepCap: GREP_CEILING,
    globCount: async (pattern) => (await backend.glob(pattern)).files?.length ?? -1,
    lsCount: async (dir) => (await backend.ls(dir)).entries?.length ?? -1,
    readFirst: async (path, offset, limit) => (await backend.read(path, { offset, limit })).content?.split("\n", 1)[0] ?? "",
    edit: async (path, from, to) => (await backend.edit(path, from, to)).occurrences === 1,
    write: async (path, content) => !(await backend.write(path, content)).error,
    ...(kind === "composite" && { routedRead: async (path: string) => (await backend.read(path)).content ?? "" }),
    ...(close && { close }),
  };
}

type PeerFileData = { content: string; mimeType: string; created_at: string; modified_at: string };
interface PeerBackend {
  grep(p: string, path?: string, glob?: string | null, max?: number | null): Promise<{ matches?: unknown[]; error?: string }>;
  glob(p: string, path?: string): Promise<{ files?: unknown[] }>;
  ls(path: string): Promise<{ files?: unknown[] }>;
  read(path: string, offset?: number, limit?: number): Promise<{ content?: unknown }>;
  write(path: string, content: string): Promise<{ error?: string; filesUpdate?: Record<string, PeerFileData> | null }>;
  edit(
    path: string,
    a: string,
    b: string,
    all?: boolean,
  ): Promise<{ error?: string; occurrences?: number; filesUpdate?: Record<string, PeerFileData> | null }>;
}

/** `deepagents`, driven through its backends' own methods. Its grep is literal only. */
export async function peerSubject(kind: Kind, corpus: Corpus, diskRoot: string): Promise<Subject> {
  const now = new Date().toISOString();
  const files: Record<string, PeerFileData> = {};
  const state = new PeerState({ state: { files } }) as unknown as PeerBackend;
  let backend: PeerBackend;
  let close: (() => Promise<void>) | undefined;
  if (kind === "filesystem") {
    backend = new PeerFilesystem({ rootDir: diskRoot, virtualMode: true }) as unknown as PeerBackend;
  } else if (isDbKind(kind)) {
    // Its own bulk load, one put at a time: the peer pages through a namespace by `created_at`,
    // so loading concurrently could give two items one timestamp and make its paging skip or repeat one.
    const db = await openPeerStore("langgraph");
    close = db.close;
    const store = new PeerStore({ store: db.store, namespace: ["bench"] });
    backend = store as unknown as PeerBackend;
    try {
      const encoder = new TextEncoder();
      const loaded = await store.uploadFiles(corpus.files.map((f) => [f.path, encoder.encode(f.content)]));
      const failed = loaded.find((r) => r.error);
      if (failed) throw new Error(`loading ${failed.path}: ${failed.error}`);
    } catch (e) {
      await close();
      throw e;
    }
  } else if (kind === "store") {
    backend = new PeerStore({ store: new PeerInMemoryStore(), namespace: ["bench"] }) as unknown as PeerBackend;
    for (const f of corpus.files) await backend.write(f.path, f.content);
  } else {
    for (const f of corpus.files) files[f.path] = { content: f.content, mimeType: "text/plain", created_at: now, modified_at: now };
    backend = state;
    if (kind === "composite") {
      const memories = new PeerStore({ store: new PeerInMemoryStore(), namespace: ["memories"] }) as unknown as PeerBackend;
      await memories.write("/preferences.md", ROUTED_CONTENT);
      backend = new PeerComposite(state as never, { "/memories/": memories as never }) as unknown as PeerBackend;
    }
  }
  // The legacy State backend returns updates for the caller to apply, as its tools do.
  const apply = (r: { filesUpdate?: Record<string, PeerFileData> | null }) => {
    if (r.filesUpdate) Object.assign(files, r.filesUpdate);
  };
  return {
    role: "peer",
    label: isDbKind(kind) ? "deepagents 1.14.1 (LangGraph PostgresStore)" : "deepagents 1.14.1",
    grepLines: async (pattern, regex, ignoreCase = false) => {
      if (regex || ignoreCase) return Number.NaN;
      const r = await backend.grep(pattern, "/", null, null);
      return r.matches?.length ?? -1;
    },
    globCount: async (pattern) => (await backend.glob(pattern, "/")).files?.length ?? -1,
    lsCount: async (dir) => (await backend.ls(dir)).files?.length ?? -1,
    readFirst: async (path, offset, limit) => String((await backend.read(path, offset, limit)).content ?? "").split("\n", 1)[0] ?? "",
    edit: async (path, from, to) => {
      const r = await backend.edit(path, from, to);
      apply(r);
      return r.occurrences === 1;
    },
    write: async (path, content) => {
      const r = await backend.write(path, content);
      apply(r);
      return !r.error;
    },
    ...(kind === "composite" && { routedRead: async (path: string) => String((await backend.read(path)).content ?? "") }),
    ...(close && { close }),
  };
}

/** Lines of `text` containing `needle`, by `indexOf` (each line counted once). */
function countLines(text: string, needle: string): number {
  let n = 0;
  let at = text.indexOf(needle);
  while (at !== -1) {
    n++;
    const eol = text.indexOf("\n", at);
    if (eol === -1) break;
    at = text.indexOf(needle, eol + 1);
  }
  return n;
}

/** What no implementation can beat by much: plain JS over the same strings, or rg/find on disk. */
export function floorSubject(kind: Kind, corpus: Corpus, diskRoot: string): Subject {
  const contents = new Map(corpus.files.map((f) => [f.path, f.content]));
  const onDisk = kind === "filesystem";
  const rgCount = (args: string[]) => {
    // rg exits 1 when nothing matches; counts are per file ("path:n").
    let out = "";
    try {
      out = execFileSync("rg", ["--count", "--no-ignore", "--hidden", "--no-messages", ...args, diskRoot], {
        encoding: "utf8",
        maxBuffer: 1 << 28,
      });
    } catch (e) {
      out = (e as { stdout?: string }).stdout ?? "";
    }
    return out
      .split("\n")
      .filter(Boolean)
      .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(":") + 1)), 0);
  };
  return {
    role: "floor",
    label: onDisk ? "ripgrep / find" : "plain JS",
    grepLines: async (pattern, regex, ignoreCase = false) => {
      if (onDisk) return rgCount([...(ignoreCase ? ["-i"] : []), ...(regex ? ["-e", pattern] : ["-F", "-e", pattern])]);
      let n = 0;
      if (regex || ignoreCase) {
        const source = regex ? pattern : pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        const re = new RegExp(source, ignoreCase ? "gim" : "gm");
        for (const text of contents.values()) n += new Set([...text.matchAll(re)].map((m) => text.lastIndexOf("\n", m.index))).size;
      } else {
        for (const text of contents.values()) n += countLines(text, pattern);
      }
      return n;
    },
    globCount: async () => {
      if (onDisk)
        return execFileSync("find", [diskRoot, "-type", "f", "-name", "*.ts"], { encoding: "utf8", maxBuffer: 1 << 28 })
          .split("\n")
          .filter(Boolean).length;
      let n = 0;
      for (const p of contents.keys()) if (p.endsWith(".ts")) n++;
      return n;
    },
    ...(onDisk && { lsCount: async (dir: string) => readdirSync(join(diskRoot, dir)).length }),
    readFirst: async (path, offset) => {
      const text = onDisk ? readFileSync(join(diskRoot, path), "utf8") : (contents.get(path) ?? "");
      let at = 0;
      for (let i = 0; i < offset; i++) at = text.indexOf("\n", at) + 1;
      return text.slice(at, text.indexOf("\n", at));
    },
    edit: async (path, from, to) => {
      const text = onDisk ? readFileSync(join(diskRoot, path), "utf8") : (contents.get(path) ?? "");
      const next = text.replace(from, to);
      if (onDisk) writeFileSync(join(diskRoot, path), next);
      else contents.set(path, next);
      return next !== text;
    },
    write: async (path, content) => {
      if (onDisk) {
        mkdirSync(join(diskRoot, path, ".."), { recursive: true });
        writeFileSync(join(diskRoot, path), content);
      } else contents.set(path, content);
      return true;
    },
  };
}
