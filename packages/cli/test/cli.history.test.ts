/**
 * `engram memory history|diff|revert`, each a real process: a scripted model (behind a real
 * OpenAI-compatible HTTP server) edits /memories/AGENTS.md through the agent's tools in two runs,
 * `engram memory` commands change AGENTS.md and facts; the history lists each change with its
 * thread, shows it as a diff, reverts it compare-and-swap, and never prints a secret.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { afterToolResult, isMemoryExtraction, memoryUpdate } from "../../../examples/node/scripted-model-server.js";
import { memoryDiff } from "../src/commands/history.js";
import { loadConfig } from "../src/config.js";
import { createContext } from "../src/context.js";
import { openStorage } from "../src/runtime.js";
import { type CommandSandbox, engram, jsonLines, tempDir, useCommandSandbox } from "./helpers.js";

// Set before each test by the sandbox.
let { server, home, cwd, env } = {} as CommandSandbox;
useCommandSandbox("engram-cli-history-", { ENGRAM_LONG_TERM_MEMORY: "false" }, (s) => {
  ({ server, home, cwd, env } = s);
});

const SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
const model = () => ["--base-url", server.baseURL, "--model", "openai-compatible:scripted"];
const run = (args: string[]) => engram(args, { env, cwd: cwd.path });

interface Listed {
  id: string;
  actor: string;
  kind: string;
  target: string;
  threadId?: string;
  reverts?: string;
  added: number;
  removed: number;
}
const history = async (): Promise<Listed[]> => {
  const r = await run(["memory", "history", "--json"]);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).not.toContain(SECRET);
  return jsonLines(r.stdout) as unknown as Listed[];
};
const agentsMd = async (): Promise<string | null> => {
  const r = await run(["memory", "show", "--json"]);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { agentsMd: string | null }).agentsMd;
};

/** One `engram run` whose model makes `call` once, then answers "done". Returns the thread id. */
async function agentRun(call: { name: string; args: Record<string, unknown> }): Promise<string> {
  server.setScript((r) =>
    isMemoryExtraction(r) ? { text: memoryUpdate() } : afterToolResult(r) ? { text: "done" } : { toolCalls: [call] },
  );
  const r = await run([...model(), "run", "--json", "remember my preferences"]);
  expect(r.code, r.stderr).toBe(0);
  const events = jsonLines(r.stdout);
  expect(events.find((e) => e.type === "tool_end")).toMatchObject({ isError: false });
  return (events.at(-1) as { threadId: string }).threadId;
}

describe("engram memory history|diff|revert", { timeout: 300_000 }, () => {
  it("lists the agent's AGENTS.md edits with their threads, diffs them, reverts compare-and-swap; no secret printed", async () => {
    const t1 = await agentRun({ name: "write_file", args: { file_path: "/memories/AGENTS.md", content: "# Memory\n- use tabs\n" } });
    const t2 = await agentRun({
      name: "edit_file",
      args: { file_path: "/memories/AGENTS.md", old_string: "- use tabs\n", new_string: `- use spaces\n- CI token ${SECRET}\n` },
    });
    expect(t2).not.toBe(t1);

    const [c2, c1, ...rest] = await history();
    expect(rest).toEqual([]);
    expect(c1).toMatchObject({ actor: "agent", kind: "agents_md", target: "/memories/AGENTS.md", threadId: t1, added: 2, removed: 0 });
    expect(c2).toMatchObject({ actor: "agent", target: "/memories/AGENTS.md", threadId: t2, added: 2, removed: 1 });
    if (!c1 || !c2) throw new Error("two changes expected");

    const text = await run(["memory", "history"]);
    expect(text.stdout).toContain(`${c2.id}  `);
    expect(text.stdout).toContain(t1);
    expect(text.stdout).toContain("+2 -1");
    expect(text.stdout).not.toContain(SECRET);

    const diff = await run(["memory", "diff", c2.id.slice(0, 16)]);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain("--- a/memories/AGENTS.md");
    expect(diff.stdout).toContain("\n-- use tabs\n");
    expect(diff.stdout).toContain("\n+- use spaces\n");
    expect(diff.stdout).toContain("+- CI token [REDACTED]");
    expect(diff.stdout).not.toContain(SECRET);
    expect(diff.stdout).not.toContain("\x1b["); // a pipe: no colours

    // The older change cannot be reverted while the newer one stands: nothing is lost.
    const early = await run(["memory", "revert", c1.id]);
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/conflict: \/memories\/AGENTS\.md changed after/);
    expect(await agentsMd()).toContain("- use spaces\n"); // unchanged

    const reverted = await run(["memory", "revert", c2.id]);
    expect(reverted.code, reverted.stderr).toBe(0);
    expect(reverted.stdout).toContain(`reverted ${c2.id}`);
    expect(await agentsMd()).toBe("# Memory\n- use tabs\n");

    // The same change again: the file no longer holds what it left.
    const again = await run(["memory", "revert", c2.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("conflict");
    expect(await agentsMd()).toBe("# Memory\n- use tabs\n");

    const [r, ...older] = await history();
    expect(r).toMatchObject({ actor: "revert", reverts: c2.id, target: "/memories/AGENTS.md", added: 1, removed: 2 });
    expect(older.map((c) => c.id)).toEqual([c2.id, c1.id]);

    // Now c1 is the latest state of the file (after the revert): reverting it deletes the file.
    const first = await run(["memory", "revert", c1.id]);
    expect(first.code, first.stderr).toBe(0);
    expect(await agentsMd()).toBeNull();

    expect((await run(["memory", "diff", "nope"])).code).toBe(1);
  });

  it("records the CLI's own AGENTS.md and facts changes (actor cli, facts one per line with ids); facts are not reverted", async () => {
    expect((await run(["memory", "add", "--agents-md", `deploy key ${SECRET}`])).code).toBe(0);
    const added = await run(["memory", "add", "Prefers short answers"]);
    expect(added.code, added.stderr).toBe(0);
    const factId = added.stdout.split(" ")[0] ?? "";
    expect((await run(["memory", "forget", factId])).code).toBe(0);

    const [forgot, add, md, ...rest] = await history();
    expect(rest).toEqual([]);
    expect(md).toMatchObject({ actor: "cli", kind: "agents_md", target: "/memories/AGENTS.md", added: 2, removed: 0 });
    expect(add).toMatchObject({ actor: "cli", kind: "facts", target: "facts", added: 1, removed: 0 });
    expect(forgot).toMatchObject({ actor: "cli", kind: "facts", added: 0, removed: 1 });
    if (!add || !md) throw new Error("changes expected");

    const diff = await run(["memory", "diff", add.id]);
    expect(diff.stdout).toContain(`+${factId} Prefers short answers`);
    const mdDiff = await run(["memory", "diff", md.id]);
    expect(mdDiff.stdout).toContain("+- deploy key [REDACTED]");
    expect(mdDiff.stdout).not.toContain(SECRET);

    const facts = await run(["memory", "revert", add.id]);
    expect(facts.code).toBe(1);
    expect(facts.stderr).toContain("facts are not reverted");

    // Retention from the configuration: one more change with at most 2 kept.
    const kept = await engram(["memory", "add", "Uses Vim"], { env: { ...env, ENGRAM_HISTORY_MAX_CHANGES: "2" }, cwd: cwd.path });
    expect(kept.code, kept.stderr).toBe(0);
    expect((await history()).map((c) => c.id)[1]).toBe(forgot?.id);
    expect(await history()).toHaveLength(2);
    expect((await engram(["memory", "history"], { env: { ...env, ENGRAM_HISTORY_MAX_AGE_DAYS: "0" }, cwd: cwd.path })).code).toBe(2);

    const limited = await run(["memory", "history", "--limit", "1"]);
    expect(limited.stdout.trim().split("\n")).toHaveLength(1);
    expect((await run(["memory", "history", "--limit", "0"])).code).toBe(2);
  });

  it("a project AGENTS.md change (--root --write) is recorded and reverted on disk, only with --root --write", async () => {
    const root = tempDir("engram-cli-history-root-");
    try {
      const file = join(root.path, "AGENTS.md");
      writeFileSync(file, "# Project\n");
      const editor = `node -e "require('fs').appendFileSync(process.argv[1], '- run npm test\\n')"`;
      const edited = await engram(["--root", root.path, "--write", "memory", "edit", "--project"], {
        env: { ...env, EDITOR: editor },
        cwd: cwd.path,
      });
      expect(edited.code, edited.stderr).toBe(0);
      expect(readFileSync(file, "utf8")).toBe("# Project\n- run npm test\n");
      const [change] = await history();
      expect(change).toMatchObject({ actor: "cli", target: "/AGENTS.md", added: 1, removed: 0 });
      if (!change) throw new Error("change expected");

      const noRoot = await run(["memory", "revert", change.id]);
      expect(noRoot.code).toBe(2);
      expect(noRoot.stderr).toContain("--root <dir> --write");
      expect((await run(["--root", root.path, "memory", "revert", change.id])).code).toBe(2);
      expect(readFileSync(file, "utf8")).toBe("# Project\n- run npm test\n");

      const reverted = await run(["--root", root.path, "--write", "memory", "revert", change.id]);
      expect(reverted.code, reverted.stderr).toBe(0);
      expect(readFileSync(file, "utf8")).toBe("# Project\n");
    } finally {
      root.remove();
    }
  });

  it("memory diff is coloured on a terminal (in-process, a TTY stream), plain in a pipe", async () => {
    const loaded = loadConfig({}, { env: { ENGRAM_HOME: home.path, ENGRAM_USER: "tester" }, cwd: cwd.path });
    const storage = openStorage(loaded.config, loaded.home);
    let id: string | undefined;
    try {
      const change = await storage.history.record({
        userId: "tester",
        kind: "agents_md",
        target: "/memories/AGENTS.md",
        actor: "api",
        before: "- old\n",
        after: "- new\n",
      });
      id = change?.id;
    } finally {
      storage.close();
    }
    if (!id) throw new Error("not recorded");
    const show = async (isTTY: boolean) => {
      let out = "";
      const ctx = createContext(loaded, { env: {} });
      ctx.stdout = { write: (t: string) => (out += t), isTTY };
      expect(await memoryDiff(ctx, id)).toBe(0);
      return out;
    };
    const tty = await show(true);
    expect(tty).toContain("\x1b[32m+- new");
    expect(tty).toContain("\x1b[31m-- old");
    const pipe = await show(false);
    expect(pipe).toContain("\n+- new\n");
    expect(pipe).not.toContain("\x1b[");
  });
});
