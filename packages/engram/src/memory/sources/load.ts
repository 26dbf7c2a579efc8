/**
 * Loading an agent's memory sources: before every model call each source is checked by version
 * (a `stat`) and re-read only when it changed; the `<agent_memory>` section (escaping,
 * per-source caps) is assembled by the core in one call when a source changed, and when none
 * did, the last section is reused as is.
 * @module
 */
import type { Backend } from "../../backends/protocol.js";
import { loadedCore } from "../../core/loader.js";
import type { Core, MemorySourceInput } from "../../core/types.js";

/** What is remembered of a memory source: the version of the text read, and that text as
 * injected (escaped and capped), so an unchanged file costs one `stat` and no work on
 * the text. */
export interface MemoryCacheEntry {
  version: string;
  rendered: string;
}

/** Options of {@link memorySectionReader}. */
export interface MemorySectionOptions {
  backend: Backend;
  /** Memory files, injected in this order. */
  sources: readonly string[];
  /** Cap per source, in estimated tokens; the rest is cut with a visible note. */
  maxTokensPerSource: number;
  /** Text by path and version, kept across runs of a thread (it also holds the last assembled
   * section, under a key no path can take). */
  cache: Map<string, MemoryCacheEntry>;
  /** The core that assembles the section. Default: the loaded core ({@link loadedCore}). */
  core?: Core | undefined;
}

/** Where an unreadable source is reported: a hook's context. */
export interface WarnContext {
  warn(message: string): void;
}

/** The cache key of the whole assembled section (paths never hold NUL). */
const SECTION_KEY = "\0section";

/** What a `stat` said of a source, as one short string compared per model call: `v<version>`
 * (`v` alone: no version, always read again), `m` (missing: left out) or `e<reason>`
 * (unreadable: the reason is shown). */
type Tag = string;
const UNKNOWN: Tag = "v";
const MISSING: Tag = "m";

function tagOf(stat: Awaited<ReturnType<Backend["stat"]>>): Tag {
  if (stat.error) return stat.error.code === "file_not_found" ? MISSING : `e${stat.error.message}`;
  if (stat.info.isDir) return "eis a directory";
  return `v${stat.info.version ?? ""}`;
}

/** Whether `stat` says what `tag` recorded (a source without a version never does). */
function sameAs(stat: Awaited<ReturnType<Backend["stat"]>>, tag: Tag): boolean {
  if (stat.error)
    return stat.error.code === "file_not_found"
      ? tag === MISSING
      : tag.length === stat.error.message.length + 1 && tag.endsWith(stat.error.message) && tag[0] === "e";
  if (stat.info.isDir) return tag === "eis a directory";
  const version = stat.info.version;
  return version !== undefined && version !== "" && tag.length === version.length + 1 && tag[0] === "v" && tag.endsWith(version);
}

/** The key of a set of tags for the thread cache (kept across runs), or `undefined` when a
 * source has no version. */
function keyOf(tags: readonly Tag[]): string | undefined {
  let key = "";
  for (const t of tags) {
    if (t === UNKNOWN) return undefined;
    key += `${t.length}:${t}`;
  }
  return key;
}

/**
 * A refresh of the memory sources' `<agent_memory>` section: one `stat` per source per call,
 * reads and a core call only when one changed. Each call hands the section as it stands to
 * `then`, with the call's `arg` and `ctx`, inside the same async call (a second async call per
 * refresh would cost an unchanged refresh a microtask more).
 */
export function memorySectionReader<A, C extends WarnContext, R>(
  options: MemorySectionOptions,
  then: (section: string, arg: A, ctx: C) => R | PromiseLike<R>,
): (arg: A, ctx: C) => Promise<R> {
  const cap = options.maxTokensPerSource;
  const cache = options.cache;
  const sources = [...options.sources];
  const n = sources.length;
  const reported = new Set<string>();
  /** The tags the last section was assembled for (`undefined` before the first). */
  let lastTags: Tag[] | undefined;
  let lastSection = "";

  /** The `<agent_memory>` section for `tags`: the thread cache's when it was assembled for the
   * same tags, else one core call over the sources (unchanged ones passed as their cached
   * parts). */
  async function assemble(tags: Tag[], ctx: WarnContext): Promise<string> {
    const key = keyOf(tags);
    const hit = cache.get(SECTION_KEY);
    if (key !== undefined && hit?.version === key) return hit.rendered;
    const inputs: MemorySourceInput[] = new Array(n);
    const fresh: (string | undefined)[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const path = sources[i] as string;
      const tag = tags[i] as Tag;
      if (tag[0] !== "v") {
        cache.delete(path);
        inputs[i] = tag === MISSING ? { path, kind: "missing" } : { path, kind: "error", text: report(path, tag.slice(1), ctx) };
        continue;
      }
      const version = tag.slice(1);
      const entry = cache.get(path);
      if (entry && version !== "" && entry.version === version) {
        inputs[i] = { path, kind: "rendered", text: entry.rendered };
        continue;
      }
      const read = await options.backend.read(path);
      if (read.error) {
        cache.delete(path);
        const missing = read.error.code === "file_not_found";
        inputs[i] = missing ? { path, kind: "missing" } : { path, kind: "error", text: report(path, read.error.message, ctx) };
        tags[i] = missing ? MISSING : `e${read.error.message}`;
        continue;
      }
      inputs[i] = { path, kind: "text", text: read.content };
      // Cached under the version of what was read, when the backend says it: a stat may have
      // seen a newer version than the read could serve (the next stat then reads again).
      const got = read.version ?? version;
      fresh[i] = got;
      if (got !== version) tags[i] = `v${got}`;
      reported.delete(path);
    }
    const out = (options.core ?? loadedCore()).memorySection(inputs, cap);
    for (let i = 0; i < n; i++) {
      const version = fresh[i];
      if (version === undefined) continue;
      const start = out.parts[2 * i] as number;
      cache.set(sources[i] as string, { version, rendered: out.text.slice(start, out.parts[2 * i + 1] as number) });
    }
    const settled = keyOf(tags);
    if (settled === undefined) cache.delete(SECTION_KEY);
    else cache.set(SECTION_KEY, { version: settled, rendered: out.text });
    return out.text;
  }

  /** The reason shown for an unreadable source; warned once until it is read again. */
  function report(path: string, message: string, ctx: WarnContext): string {
    if (!reported.has(path)) {
      reported.add(path);
      ctx.warn(`memory source ${path} could not be read: ${message}`);
    }
    return message;
  }

  return async (arg, ctx) => {
    // One stat per source; when every one says what it said last time, the last section is
    // reused as is (no read, no core call, no string built from it). The comparison reads
    // the stat's fields in place: no tag is built unless something changed.
    const before = lastTags;
    let tags: Tag[] | undefined = before === undefined ? [] : undefined;
    for (let i = 0; i < n; i++) {
      const stat = await options.backend.stat(sources[i] as string);
      if (tags === undefined) {
        if (sameAs(stat, (before as Tag[])[i] as Tag)) continue;
        tags = (before as Tag[]).slice(0, i);
      }
      tags[i] = tagOf(stat);
    }
    if (tags !== undefined) {
      lastSection = await assemble(tags, ctx);
      lastTags = tags;
    }
    return then(lastSection, arg, ctx);
  };
}
