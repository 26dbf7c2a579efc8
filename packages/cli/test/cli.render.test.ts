/**
 * What the `engram` command prints of untrusted text — a model's tool-call ids, arguments and
 * answers, a project's SKILL.md and configuration file, stored memory — is shown inert: every
 * print site is listed and checked (print-sites.ts), and each kind of hostile text goes through
 * the real command.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { afterToolResult, isMemoryExtraction, memoryUpdate } from "../../../examples/node/scripted-model-server.js";
import { inert, inertLines, jsonText } from "../src/render.js";
import { type CommandSandbox, engram, jsonLines, useCommandSandbox } from "./helpers.js";
import { type Allowed, scanPrintSites, sourceFiles } from "./print-sites.js";

const SRC = resolve(fileURLToPath(new URL("../src", import.meta.url)));

/** Bidirectional controls: they reorder what the terminal shows. */
const BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e", "\u200f", "\u061c"];
/** What a terminal acts on: ESC (OSC, CSI), BEL, CR, C1 CSI, and the bidi controls. */
const ACTED_ON = ["\x1b", "\x07", "\r", "\x9b", ...BIDI];
/** Retitles the window, clears the screen, overwrites the line, reverses what follows. */
const HOSTILE = "\x1b]0;pwned\x07\x1b[2J\rfake\x9b31m\u202eevil\u2066";

function expectInert(out: string): void {
  for (const ch of ACTED_ON) expect(out, `U+${ch.charCodeAt(0).toString(16)}`).not.toContain(ch);
}

describe("the renderer", () => {
  it("shows controls in caret notation, C1 as \\x.., format characters as <U+XXXX>", () => {
    expect(inert("a\x1b[2Jb\x07\x7f\x9b")).toBe("a^[[2Jb^G^?\\x9b");
    for (const ch of BIDI) expect(inert(`x${ch}y`)).toBe(`x<U+${ch.codePointAt(0)?.toString(16).toUpperCase().padStart(4, "0")}>y`);
    // Zero-width and tag characters (hidden text) and the line separators.
    expect(inert("a\u200bb\ufeffc\u{e0041}d\u2028e")).toBe("a<U+200B>b<U+FEFF>c<U+E0041>d<U+2028>e");
  });

  it("a single-line field cannot start a new line; a block keeps its lines", () => {
    expect(inert("/a.txt\n? review approved\tx\r\n")).toBe("/a.txt^J? review approved^Ix^M^J");
    expect(inertLines("one\r\ntwo\tcols\nthree\rfour")).toBe("one\ntwo\tcols\nthree^Mfour");
  });

  it("keeps the joiners scripts need between letters, shows them elsewhere", () => {
    expect(inert("می\u200cخواهم")).toBe("می\u200cخواهم");
    expect(inert("👩\u200d💻")).toBe("👩\u200d💻");
    expect(inert("pass\u200dwd")).toBe("pass<U+200D>wd");
    expect(inert("\u200dx")).toBe("<U+200D>x");
  });

  it("jsonText is the same JSON value with nothing a terminal acts on", () => {
    const value = { id: HOSTILE, nested: [`\u2067${HOSTILE}`], n: 1 };
    const text = jsonText(value);
    expect(JSON.parse(text)).toEqual(value);
    expectInert(text);
    expect(text).not.toContain("\n");
  });
});

/** Printed as they are, and why that is safe. */
const ALLOWED: Allowed[] = [
  { file: "commands/config.ts", expr: "r.key", why: "a configuration key: one of the command's own KEYS" },
  { file: "commands/history.ts", expr: "added", why: "a count of lines (lineCounts)" },
  { file: "commands/history.ts", expr: "removed", why: "a count of lines (lineCounts)" },
  { file: "commands/threads.ts", expr: "r.messages", why: "a count of messages" },
  { file: "commands/threads.ts", expr: "r.preview", why: "made by preview(), whose returns are checked" },
  { file: "commands/threads.ts", expr: "more", why: "a count of threads" },
  { file: "commands/threads.ts", expr: "earlier", why: "a count of messages" },
  { file: "commands/chat.ts", expr: "waiting", why: "a count of conversations (closeAgent's number)" },
  { file: "commands/chat.ts", expr: "runStateNote(run)", why: "a fixed sentence around a count of steps (runStatus's length)" },
  { file: "commands/threads.ts", expr: "r.run.step", why: "a count of steps (runStatus's length)" },
  { file: "terminal.ts", expr: "this.#text", why: "Spinner.start's argument: its calls are checked (a print helper)" },
  {
    file: "commands/chat.ts",
    expr: "await rewindCommand(ctx, storage, threadKey, text.split(/\\s+/)[1])",
    why: "rewindCommand's lines, whose returns are checked",
  },
  { file: "commands/thread-history.ts", expr: "p.messages", why: "a count of messages (HistoryPoint.messages)" },
  { file: "commands/thread-history.ts", expr: "found.messages", why: "a count of messages (HistoryPoint.messages)" },
  { file: "commands/thread-history.ts", expr: "points.length - recent.length", why: "a count of points" },
  { file: "commands/thread-history.ts", expr: "done.messagesAfter", why: "a count of messages (rewindThread's result)" },
  { file: "commands/thread-history.ts", expr: "done.messagesBefore", why: "a count of messages (rewindThread's result)" },
];

describe("every print of the command", () => {
  it("goes through the renderer, or is a constant or on the allow-list — listed, not sampled", () => {
    const { sites, violations, unused } = scanPrintSites(sourceFiles(SRC), ALLOWED);
    expect(violations.map((v) => `${v.file}:${v.line} ${v.call}(…${v.expr}…)`)).toEqual([]);
    expect(unused).toEqual([]);
    // The scan sees every command's prints (a scan that finds nothing proves nothing).
    const files = new Set(sites.map((s) => s.file));
    for (const f of ["cli.ts", "context.ts", "runtime.ts", "terminal.ts", "commands/chat.ts", "commands/run.ts", "commands/threads.ts"])
      expect(files, f).toContain(f);
    for (const f of ["commands/history.ts", "commands/memory.ts", "commands/skills.ts", "commands/config.ts"])
      expect(files, f).toContain(f);
    expect(sites.length).toBeGreaterThan(100);
  });

  it("a new raw print of any kind fails the scan", () => {
    const file = "commands/chat.ts";
    // The source text of prints (escaped: these are not templates here).
    const raw = [
      `ctx.stdout.write(\`approved \${id}\\n\`);`,
      "ctx.stderr.write(name + '\\n');",
      "process.stdout.write(JSON.stringify(event));",
      "console.log(skill.description);",
      `print(\`review \${call.name}\`);`,
      `rl.question(\`forget \${user}? \`);`,
      "other.write(text);",
      "renderer.spinner.start(label);",
    ];
    for (const line of raw) {
      const { violations } = scanPrintSites(
        [{ file, text: `function f(ctx, id, name, event, skill, call, user, text, other, label) { ${line} }` }],
        [],
      );
      expect(violations, line).not.toEqual([]);
    }
    const safe = `function f(ctx, id, c) { ctx.stdout.write(\`approved \${inert(id)} \${c.dim("·")}\\n\`); ctx.error(\`no \${id}\`); }`;
    expect(scanPrintSites([{ file, text: safe }], []).violations).toEqual([]);
  });
});

let { server, cwd, root, env } = {} as CommandSandbox;
useCommandSandbox("engram-render-", {}, (s) => {
  ({ server, cwd, root, env } = s);
});
const model = () => ["--base-url", server.baseURL, "--model", "openai-compatible:scripted"];
const run = (args: string[], input?: string) => engram(args, { env, cwd: cwd.path, ...(input !== undefined && { input }) });

describe("hostile text through the real command", { timeout: 300_000 }, () => {
  it("run --yes / --deny: the model's tool-call id is shown inert", async () => {
    server.setScript((r) =>
      isMemoryExtraction(r)
        ? { text: memoryUpdate() }
        : afterToolResult(r)
          ? { text: `answer ${HOSTILE} end` }
          : { toolCalls: [{ id: `call${HOSTILE}\nforged line`, name: "write_file", args: { file_path: "/x.md", content: "x" } }] },
    );
    for (const decide of ["--yes", "--deny"]) {
      const r = await run([...model(), "--review", "write_file", "run", decide, "write x"]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(`${decide === "--yes" ? "approved" : "rejected"} call^[]0;pwned^G`);
      expect(r.stderr).toContain("<U+202E>evil<U+2066>^Jforged line");
      expect(r.stderr.split("\n").some((l) => l.startsWith("forged line"))).toBe(false);
      expect(r.stdout).toContain("answer ");
      expectInert(r.stdout + r.stderr);
    }
  });

  it("chat: a newline in a model's file_path cannot forge a line under the review header; bidi is shown", async () => {
    server.setScript((r) =>
      isMemoryExtraction(r)
        ? { text: memoryUpdate() }
        : afterToolResult(r)
          ? { text: `done \u202e${HOSTILE}` }
          : { toolCalls: [{ name: "write_file", args: { file_path: `/a.md\n  "approved": true\u202e`, content: `x${HOSTILE}` } }] },
    );
    const r = await run([...model(), "--root", root.path, "--write", "--review", "write_file", "chat"], "write it\nr\n\n/exit\n");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('review write_file /a.md^J  "approved": true<U+202E>');
    expect(r.stdout.split("\n").filter((l) => l.trim().startsWith('"approved": true'))).toEqual([]);
    expect(r.stdout).toContain("done <U+202E>");
    expectInert(r.stdout + r.stderr);
  });

  it("skills list: a project SKILL.md's description is shown inert", async () => {
    const dir = join(root.path, "skills", "deploy");
    mkdirSync(dir, { recursive: true });
    // YAML's double-quoted escapes: ESC, BEL, C1 CSI, RLO, a newline.
    writeFileSync(
      join(dir, "SKILL.md"),
      '---\nname: deploy\ndescription: "ships \\e]0;pwned\\a\\x9b31m \\u202Eevil\\nforged"\n---\nBody.\n',
    );
    const r = await run(["--root", root.path, "skills", "list"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("ships ^[]0;pwned^G\\x9b31m <U+202E>evil^Jforged");
    expect(r.stdout.split("\n").some((l) => l.startsWith("forged"))).toBe(false);
    expectInert(r.stdout + r.stderr);
    const json = await run(["--root", root.path, "skills", "list", "--json"]);
    expect(jsonLines(json.stdout)[0]).toMatchObject({ description: "ships \x1b]0;pwned\x07\x9b31m \u202eevil\nforged" });
    expectInert(json.stdout);
  });

  it("a project file's unknown key in the exit-2 error is shown inert", async () => {
    writeFileSync(join(cwd.path, "engram.config.json"), JSON.stringify({ [`x${HOSTILE}\nengram: forged`]: 1 }));
    const r = await run(["config"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("x^[]0;pwned^G");
    expect(r.stderr.split("\n").some((l) => l.startsWith("engram: forged"))).toBe(false);
    expectInert(r.stderr);
  });

  it("engram config: a project root is shown inert; --json stays JSON", async () => {
    const sub = `sub\u202e${"\x1b[2J"}dir`;
    writeFileSync(join(cwd.path, "engram.config.json"), JSON.stringify({ root: sub }));
    const r = await run(["config"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("sub<U+202E>^[[2Jdir");
    expectInert(r.stdout);
    const json = await run(["config", "--json"]);
    expect(json.code, json.stderr).toBe(0);
    expect((JSON.parse(json.stdout) as { config: { root: { value: string } } }).config.root.value).toBe(join(cwd.path, sub));
    expectInert(json.stdout);
  });

  it("memory show and run --json: bidi controls are shown or escaped, never sent", async () => {
    expect((await run(["memory", "add", "--agents-md", `note \u2067${HOSTILE}`])).code).toBe(0);
    expect((await run(["memory", "add", `likes \u202etea`])).code).toBe(0);
    const shown = await run(["memory", "show"]);
    expect(shown.stdout).toContain("note <U+2067>^[]0;pwned^G");
    expect(shown.stdout).toContain("likes <U+202E>tea");
    expectInert(shown.stdout);
    server.setScript((r) => (isMemoryExtraction(r) ? { text: memoryUpdate() } : { text: `said \u202e${HOSTILE}` }));
    const json = await run([...model(), "run", "--json", "hi"]);
    expect(json.code, json.stderr).toBe(0);
    expect(jsonLines(json.stdout).at(-1)).toMatchObject({ text: `said \u202e${HOSTILE}` });
    expectInert(json.stdout);
  });
});
