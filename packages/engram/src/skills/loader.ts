/**
 * Discovery of skills on a backend: `<source>/<skill-name>/SKILL.md` for each source directory,
 * with a cache keyed by path and file version so an unchanged skill costs a `stat`, not a read.
 * @module
 */
import { type ChangeMark, changeMark, sameMark } from "../backends/change-mark.js";
import type { Backend } from "../backends/protocol.js";
import type { FileInfo } from "../core/types.js";
import { parseSkillFile, type ParseSkillResult, type Skill } from "./parse.js";

/** Largest `SKILL.md` that is read, in bytes (10 MiB); larger files are skipped with a warning. */
export const MAX_SKILL_FILE_BYTES = 10 * 1024 * 1024;

/** Options of {@link SkillsLoader}. */
export interface SkillsLoaderOptions {
  /** Where the skill directories live. */
  backend: Backend;
  /** Directories holding one sub-directory per skill, in priority order: a later source wins a name clash. */
  sources: readonly string[];
}

interface Cached {
  version: string;
  result: ParseSkillResult;
}

/** `/skills/` and `/skills` → `/skills`; `/` stays. */
function normaliseDir(path: string): string {
  const trimmed = path.replace(/\/+$/, "");
  return trimmed === "" ? "/" : trimmed;
}

/** A file's version for change detection, or `undefined` when the backend gives nothing usable. */
function versionOf(info: FileInfo): string | undefined {
  if (info.version !== undefined) return info.version;
  if (info.modifiedAt !== undefined) return `mtime:${info.modifiedAt}:${info.size ?? "?"}`;
  return undefined;
}

function byName(a: Skill, b: Skill): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * Loads the skills of several sources and keeps them fresh. Each {@link SkillsLoader.load} lists
 * every source and stats every `SKILL.md`; only files whose version changed since the previous
 * load are read and parsed again. On a backend that can tell its files are unchanged since the
 * previous load (a plain `StateBackend`, a `CompositeBackend` over such backends only, or a
 * wrapper that only replaces their writing methods: see `changeMark`), nothing is listed either
 * and the previous skills are returned. The cache belongs to the instance: make one per thread.
 */
export class SkillsLoader {
  readonly #backend: Backend;
  readonly #sources: string[];
  /** `SKILL.md` path → its version when last parsed and the outcome. */
  #cache = new Map<string, Cached>();
  /** Listing and stat failures reported by the previous load (reported again only after they clear). */
  #reported = new Set<string>();
  /** Where the backend's files stood, when it can tell (see `changeMark`). */
  readonly #mark: (() => Promise<ChangeMark>) | undefined;
  /** The previous load's skills and the mark taken before it. */
  #last: { mark: ChangeMark; skills: readonly Skill[] } | undefined;

  constructor(options: SkillsLoaderOptions) {
    this.#backend = options.backend;
    this.#sources = options.sources.map(normaliseDir);
    this.#mark = changeMark(options.backend);
  }

  /**
   * The current skills, sorted by name; on a name clash the skill from the later source wins.
   * A missing source is empty. Invalid or oversized files are skipped with one `warn` per file
   * version; a source that cannot be listed is skipped with one `warn` until it recovers.
   */
  async load(warn: (message: string) => void): Promise<Skill[]> {
    // Taken before the listing: a change made while it runs shows on the next load.
    const mark = this.#mark ? await this.#mark() : undefined;
    const last = this.#last;
    if (mark && last && sameMark(mark, last.mark)) return [...last.skills];
    const reported = new Set<string>();
    const report = (message: string) => {
      reported.add(message);
      if (!this.#reported.has(message)) warn(message);
    };
    const seen = new Map<string, Cached>();
    const perSource = await Promise.all(
      this.#sources.map(async (source) => {
        const dirs = await this.#skillDirs(source, report);
        return Promise.all(dirs.map((dir) => this.#skillIn(dir, warn, report, seen)));
      }),
    );
    this.#cache = seen;
    this.#reported = reported;
    const byNameMap = new Map<string, Skill>();
    for (const skills of perSource) for (const skill of skills) if (skill) byNameMap.set(skill.name, skill);
    const skills = [...byNameMap.values()].sort(byName);
    this.#last = mark && { mark, skills: [...skills] };
    return skills;
  }

  /** Directory paths (ending in `/`) directly under a source. */
  async #skillDirs(source: string, report: (message: string) => void): Promise<string[]> {
    const listed = await this.#backend.ls(source);
    if (listed.error) {
      if (listed.error.code !== "file_not_found") report(`skills source ${source} skipped: ${listed.error.message}`);
      return [];
    }
    return listed.entries.filter((e) => e.isDir).map((e) => (e.path.endsWith("/") ? e.path : `${e.path}/`));
  }

  async #skillIn(
    dir: string,
    warn: (message: string) => void,
    report: (message: string) => void,
    seen: Map<string, Cached>,
  ): Promise<Skill | undefined> {
    const path = `${dir}SKILL.md`;
    const stat = await this.#backend.stat(path);
    if (stat.error) {
      // A directory without a SKILL.md is not a skill.
      if (stat.error.code !== "file_not_found") report(`skill ${path} skipped: ${stat.error.message}`);
      return undefined;
    }
    if (stat.info.isDir) {
      report(`skill ${path} skipped: it is a directory`);
      return undefined;
    }
    const version = versionOf(stat.info);
    const cached = this.#cache.get(path);
    let result: ParseSkillResult;
    if (version !== undefined && cached?.version === version) {
      result = cached.result;
    } else {
      result = await this.#parse(path, dir, stat.info.size);
      if (result.error) warn(`skill ${path} skipped: ${result.error}`);
    }
    if (version !== undefined) seen.set(path, { version, result });
    return result.skill;
  }

  async #parse(path: string, dir: string, size: number | undefined): Promise<ParseSkillResult> {
    const tooLarge = (bytes: number): ParseSkillResult => ({ error: `the file is larger than 10 MB (${bytes} bytes)` });
    if (size !== undefined && size > MAX_SKILL_FILE_BYTES) return tooLarge(size);
    const read = await this.#backend.read(path);
    if (read.error) return { error: `cannot be read: ${read.error.message}` };
    if (size === undefined) {
      const bytes = new TextEncoder().encode(read.content).length;
      if (bytes > MAX_SKILL_FILE_BYTES) return tooLarge(bytes);
    }
    const dirName = dir.slice(0, -1).split("/").pop() ?? "";
    return parseSkillFile(read.content, dirName, path);
  }
}
