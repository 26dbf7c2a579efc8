/**
 * `engram memory show|edit|forget|facts|add|clear`: the current user's AGENTS.md files and
 * long-term facts. Every write passes `redactSecrets` first and is recorded in the memory
 * history (actor `"cli"`; `engram memory history` lists it).
 * @module
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline/promises";
import { type Backend, FACT_CATEGORIES, type Fact, type FactCategory, type LongTermMemory, loadCore, redactSecrets } from "engram";
import { factsTarget, factsText } from "engram/kit";
import type { Context } from "../context.js";
import { EXIT } from "../exit.js";
import { PROJECT_MEMORY_PATH, type Storage, USER_MEMORY_PATH, openLongTermMemory } from "../runtime.js";
import { inert, inertLines, jsonText } from "../render.js";
import { withStorage } from "./open.js";

/** The user's AGENTS.md inside the `/memories/` store backend. */
const USER_FILE = "/AGENTS.md";

function withMemory(ctx: Context, fn: (storage: Storage, memory: LongTermMemory) => Promise<number>): Promise<number> {
  return withStorage(ctx, async (storage) => {
    // redactSecrets is synchronous and runs in the core: load it first (either build).
    await loadCore();
    return fn(storage, openLongTermMemory(storage));
  });
}

async function readText(backend: Backend, path: string): Promise<{ text: string; version: string } | undefined> {
  const stat = await backend.stat(path);
  if (stat.error) return undefined;
  const bytes = await backend.readBytes(path);
  if (bytes.error) throw new Error(bytes.error.message);
  const version = (stat.info as { version?: string }).version ?? "";
  return { text: new TextDecoder().decode(bytes.data), version };
}

/** Records a change the CLI made to an AGENTS.md (`target`: its path in the agent's tree). */
async function recordAgentsMd(ctx: Context, storage: Storage, target: string, before: string | null, after: string | null) {
  await storage.history.record({ userId: ctx.loaded.config.user, kind: "agents_md", target, actor: "cli", before, after });
}

/** Records a change the CLI made to the long-term facts. */
async function recordFacts(ctx: Context, storage: Storage, before: readonly Fact[], after: readonly Fact[]) {
  await storage.history.record({
    userId: ctx.loaded.config.user,
    kind: "facts",
    target: factsTarget(),
    actor: "cli",
    before: factsText(before),
    after: factsText(after),
  });
}

/** Writes `text` redacted, compare-and-swap on `version` (`"0"`: must not exist). */
async function writeRedacted(
  backend: Backend,
  path: string,
  text: string,
  version: string,
): Promise<{ redacted: boolean; written: string }> {
  const clean = redactSecrets(text);
  const r = await backend.write(path, clean, { ifVersion: version });
  if (r.error) {
    throw new Error(
      r.error.code === "conflict" ? `${path} changed meanwhile; nothing was written (run the command again)` : r.error.message,
    );
  }
  return { redacted: clean !== text, written: clean };
}

/** `engram memory show`. */
export function memoryShow(ctx: Context, options: { json?: boolean }): Promise<number> {
  return withMemory(ctx, async (storage, memory) => {
    const { user } = ctx.loaded.config;
    const userMd = await readText(storage.userFiles, USER_FILE);
    const projectMd = storage.project ? await readText(storage.project, PROJECT_MEMORY_PATH) : undefined;
    const data = await memory.read(user);
    if (options.json) {
      ctx.stdout.write(`${jsonText({ user, agentsMd: userMd?.text ?? null, projectAgentsMd: projectMd?.text ?? null, longTerm: data })}\n`);
      return EXIT.ok;
    }
    const c = ctx.colors(ctx.stdout);
    const w = (s: string) => ctx.stdout.write(`${s}\n`);
    w(c.bold(`AGENTS.md of ${inert(user)}`) + c.dim(" (/memories/AGENTS.md)"));
    w(inertLines(userMd?.text.trimEnd() ?? "") || c.dim("(empty)"));
    if (storage.project) {
      w("");
      w(c.bold("project AGENTS.md") + c.dim(` (${inert(ctx.loaded.config.root ?? "")}/AGENTS.md)`));
      w(inertLines(projectMd?.text.trimEnd() ?? "") || c.dim("(none)"));
    }
    w("");
    w(c.bold(`long-term memory of ${inert(user)}`));
    for (const [name, section] of [...Object.entries(data.user), ...Object.entries(data.history)]) {
      if (section.summary) w(`${c.dim(`${inert(name)}:`)} ${inertLines(section.summary)}`);
    }
    if (data.facts.length === 0) w(c.dim("(no facts)"));
    for (const f of data.facts)
      w(`${c.dim(inert(f.id))}  ${inert(f.content)} ${c.dim(`(${inert(f.category)}, ${inert(String(f.confidence))})`)}`);
    return EXIT.ok;
  });
}

/** `engram memory facts`. */
export function memoryFacts(ctx: Context, options: { json?: boolean }): Promise<number> {
  return withMemory(ctx, async (_storage, memory) => {
    const facts = await memory.listFacts(ctx.loaded.config.user);
    const c = ctx.colors(ctx.stdout);
    if (options.json) for (const f of facts) ctx.stdout.write(`${jsonText(f)}\n`);
    else if (facts.length === 0) ctx.stdout.write(c.dim("no facts yet\n"));
    else
      for (const f of facts)
        ctx.stdout.write(`${inert(f.id)}  ${c.dim(`${inert(f.category).padEnd(11)} ${f.confidence.toFixed(2)}`)}  ${inert(f.content)}\n`);
    return EXIT.ok;
  });
}

/** `engram memory add <text…>`: a long-term fact, or a line of the user's AGENTS.md. */
export function memoryAdd(ctx: Context, words: string[], options: { category?: string; agentsMd?: boolean }): Promise<number> {
  const text = words.join(" ").trim();
  if (text === "") return Promise.resolve(ctx.usage("nothing to add: engram memory add <text>"));
  if (options.category !== undefined && !(FACT_CATEGORIES as readonly string[]).includes(options.category)) {
    return Promise.resolve(ctx.usage(`--category must be one of ${FACT_CATEGORIES.join(", ")}`));
  }
  return withMemory(ctx, async (storage, memory) => {
    const clean = redactSecrets(text);
    const note = clean !== text ? " (a secret was redacted)" : "";
    if (options.agentsMd) {
      const current = await readText(storage.userFiles, USER_FILE);
      const base = current?.text ?? "# Memory\n";
      const { written } = await writeRedacted(
        storage.userFiles,
        USER_FILE,
        `${base.endsWith("\n") ? base : `${base}\n`}- ${clean}\n`,
        current?.version ?? "0",
      );
      await recordAgentsMd(ctx, storage, USER_MEMORY_PATH, current?.text ?? null, written);
      ctx.stdout.write(`added to /memories/AGENTS.md${note}\n`);
      return EXIT.ok;
    }
    const factsBefore = await memory.listFacts(ctx.loaded.config.user);
    const r = await memory.addFact(ctx.loaded.config.user, undefined, {
      content: clean,
      ...(options.category && { category: options.category as FactCategory }),
    });
    if (r.error) {
      ctx.error(`${r.error.code}: ${r.error.message}${r.fact ? ` (${r.fact.id})` : ""}`);
      return EXIT.error;
    }
    await recordFacts(ctx, storage, factsBefore, await memory.listFacts(ctx.loaded.config.user));
    ctx.stdout.write(`${inert(r.fact.id)}  ${inert(r.fact.content)}${note}\n`);
    return EXIT.ok;
  });
}

/** `engram memory forget <id…>`: deletes facts by id (a unique prefix is enough, with or
 * without `fact_`). */
export function memoryForget(ctx: Context, ids: string[]): Promise<number> {
  // An empty id (an unset shell variable) would be a prefix of every fact: never a match.
  if (ids.length === 0 || ids.some((id) => id.trim() === "")) {
    return Promise.resolve(ctx.usage("which fact? engram memory forget <id> (ids: engram memory facts)"));
  }
  return withMemory(ctx, async (storage, memory) => {
    const { user } = ctx.loaded.config;
    const facts = await memory.listFacts(user);
    let code: number = EXIT.ok;
    for (const id of ids) {
      // `fact_` may be left out: `memory forget 3a7c` is `memory forget fact_3a7c`.
      const prefixes = id.startsWith("fact_") ? [id] : [id, `fact_${id}`];
      const matches = facts.filter((f) => prefixes.some((p) => f.id.startsWith(p)));
      const exact = matches.find((f) => prefixes.includes(f.id));
      const target = exact ?? (matches.length === 1 ? matches[0] : undefined);
      if (!target) {
        ctx.error(matches.length > 1 ? `${id} matches ${matches.length} facts; give more of the id` : `no fact ${id}`);
        code = EXIT.error;
        continue;
      }
      const r = await memory.deleteFact(user, undefined, target.id);
      if (r.error) {
        ctx.error(r.error.message);
        code = EXIT.error;
      } else ctx.stdout.write(`forgot ${inert(target.id)}  ${inert(target.content)}\n`);
    }
    await recordFacts(ctx, storage, facts, await memory.listFacts(user));
    return code;
  });
}

/** `engram memory clear`: forgets the user's long-term memory (and the AGENTS.md with `--agents-md`). */
export async function memoryClear(ctx: Context, options: { yes?: boolean; agentsMd?: boolean }): Promise<number> {
  const { user } = ctx.loaded.config;
  if (!options.yes) {
    if (!process.stdin.isTTY) return ctx.usage("memory clear needs --yes when not run in a terminal");
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    const answer = await rl.question(
      `forget everything engram remembers about ${inert(user)}${options.agentsMd ? " (and AGENTS.md)" : ""}? [y/N] `,
    );
    rl.close();
    if (!/^y(es)?$/i.test(answer.trim())) {
      ctx.stdout.write("nothing changed\n");
      return EXIT.ok;
    }
  }
  return withMemory(ctx, async (storage, memory) => {
    const factsBefore = await memory.listFacts(user);
    await memory.clear(user);
    await recordFacts(ctx, storage, factsBefore, await memory.listFacts(user));
    if (options.agentsMd) {
      const before = await readText(storage.userFiles, USER_FILE);
      const r = await storage.userFiles.delete(USER_FILE);
      if ("error" in r && r.error.code !== "file_not_found") throw new Error(r.error.message);
      if (before) await recordAgentsMd(ctx, storage, USER_MEMORY_PATH, before.text, null);
    }
    ctx.stdout.write(`cleared the long-term memory of ${inert(user)}${options.agentsMd ? " and /memories/AGENTS.md" : ""}\n`);
    return EXIT.ok;
  });
}

/** `engram memory edit [--project]`: opens `$EDITOR` on an AGENTS.md, writes it back redacted. */
export function memoryEdit(ctx: Context, options: { project?: boolean }): Promise<number> {
  return withMemory(ctx, async (storage) => {
    let backend: Backend = storage.userFiles;
    let path = USER_FILE;
    if (options.project) {
      if (!storage.project) return ctx.usage("--project needs --root <dir>");
      if (!ctx.loaded.config.write) return ctx.usage("the project directory is read-only: add --write to edit its AGENTS.md");
      backend = storage.project;
      path = PROJECT_MEMORY_PATH;
    }
    const current = await readText(backend, path);
    const before = current?.text ?? "# Memory\n\n";
    const dir = mkdtempSync(join(tmpdir(), "engram-edit-"));
    const file = join(dir, "AGENTS.md");
    try {
      writeFileSync(file, before);
      const editor = ctx.env.VISUAL || ctx.env.EDITOR || "vi";
      const r = spawnSync(`${editor} "${file}"`, { shell: true, stdio: "inherit" });
      if (r.status !== 0) {
        ctx.error(`the editor (${editor}) exited with ${r.status ?? r.signal}; nothing was written`);
        return EXIT.error;
      }
      const after = readFileSync(file, "utf8");
      if (after === before) {
        ctx.stdout.write("unchanged\n");
        return EXIT.ok;
      }
      const { redacted, written } = await writeRedacted(backend, path, after, current?.version ?? "0");
      await recordAgentsMd(ctx, storage, options.project ? PROJECT_MEMORY_PATH : USER_MEMORY_PATH, current?.text ?? null, written);
      ctx.stdout.write(
        `saved ${options.project ? `${inert(ctx.loaded.config.root ?? "")}/AGENTS.md` : "/memories/AGENTS.md"}${redacted ? " (secrets were redacted)" : ""}\n`,
      );
      return EXIT.ok;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
