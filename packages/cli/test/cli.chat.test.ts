/**
 * `engram chat` in a real terminal: tmux runs the command (from its sources) in a 120×40 pane,
 * keys are sent with send-keys and the screen is read with capture-pane. The model is a scripted
 * one behind a real OpenAI-compatible HTTP server that streams slowly when asked to.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  type ScriptedModelServer,
  afterToolResult,
  isMemoryExtraction,
  lastUserText,
  memoryUpdate,
  startScriptedModelServer,
  systemText,
} from "../../../examples/node/scripted-model-server.js";
import { REPO, cleanEnv, tempDir } from "./helpers.js";
import { Terminal } from "./tmux.js";

const terminal = new Terminal();
const tmux = (...args: string[]) => terminal.tmux(...args);
const socket = terminal.session("chat");

let server: ScriptedModelServer;
let home: ReturnType<typeof tempDir>;
let root: ReturnType<typeof tempDir>;

const STORY = `${"once upon a time ".repeat(200)}THE END`;

beforeAll(async () => {
  home = tempDir("engram-chat-home-");
  root = tempDir("engram-chat-root-");
  server = await startScriptedModelServer((r) => {
    if (isMemoryExtraction(r)) {
      const said = r.messages.map((m) => m.content ?? "").join("\n");
      return {
        text: memoryUpdate(said.includes("I like green tea") && !said.includes("Likes green tea") ? [{ content: "Likes green tea" }] : []),
      };
    }
    const user = lastUserText(r);
    if (user.includes("green tea")) return { text: "Nice, green tea it is." };
    if (user.includes("save a note")) {
      if (afterToolResult(r)) return { text: "Saved the project note." };
      return { toolCalls: [{ name: "write_file", args: { file_path: "/AGENTS.md", content: "- Notes live in notes.md.\n" } }] };
    }
    if (user.includes("save another")) {
      if (afterToolResult(r)) return { text: `Result: ${r.messages.at(-1)?.content}` };
      return { toolCalls: [{ name: "write_file", args: { file_path: "/other.md", content: "original" } }] };
    }
    if (user.includes("long story")) return { text: STORY, chunkDelayMs: 40 };
    if (user.includes("remember")) {
      const system = systemText(r);
      const tea = system.includes("Likes green tea") ? "you like green tea" : "nothing about tea";
      const note = system.includes("Notes live in notes.md") ? "notes live in notes.md" : "no project note";
      return { text: `I remember: ${tea}; ${note}.` };
    }
    return { text: "ok" };
  });
});

afterAll(async () => {
  terminal.close();
  await server.close();
  home.remove();
  root.remove();
});

/** Starts `engram chat` in a detached tmux session; the pane stays after the command exits. */
function startChat(session: string): void {
  const env = cleanEnv({ ENGRAM_HOME: home.path, ENGRAM_USER: "tester", LANG: "C.UTF-8", TERM: "xterm-256color" });
  const args = [
    "--base-url",
    server.baseURL,
    "--model",
    "openai-compatible:scripted",
    "--root",
    root.path,
    "--write",
    "--review",
    "write_file",
    "chat",
  ];
  terminal.start(session, { env, args, dir: home.path });
}

const pane = (session: string) => terminal.pane(session);
const waitFor = (session: string, text: string | RegExp | ((screen: string) => boolean), ms?: number) =>
  terminal.waitFor(session, text, ms);
const type = (session: string, text: string) => terminal.type(session, text);

it("chat: streamed answer, an approved write, Ctrl-C cancels a slow turn, a second Ctrl-C exits; a restart keeps the memory", {
  timeout: 300_000,
}, async () => {
  const first = `${socket}-a`;
  startChat(first);
  await waitFor(first, "engram chat");
  await waitFor(first, "› ");

  type(first, "hello, I like green tea");
  await waitFor(first, "Nice, green tea it is.");

  // A write under review: the arguments are shown, approve it.
  type(first, "please save a note");
  await waitFor(first, "[a]pprove · [e]dit · [r]eject");
  expect(pane(first)).toContain('"file_path": "/AGENTS.md"');
  expect(existsSync(join(root.path, "AGENTS.md"))).toBe(false);
  type(first, "a");
  await waitFor(first, "Saved the project note.");
  expect(pane(first)).toMatch(/✓ write_file \/AGENTS\.md · \d+ B · \d+ ms/);
  expect(readFileSync(join(root.path, "AGENTS.md"), "utf8")).toBe("- Notes live in notes.md.\n");

  // Edit the arguments as JSON (the line is pre-filled; replace it), then reject one with a reason.
  type(first, "save another note");
  const prompts = (n: number) => (screen: string) => screen.split("[a]pprove · [e]dit · [r]eject › ").length - 1 >= n;
  await waitFor(first, prompts(2));
  expect(pane(first)).toContain("? review write_file /other.md");
  type(first, "e");
  await waitFor(first, "arguments (JSON) › ");
  tmux("send-keys", "-t", first, "C-u");
  type(first, '{"file_path": "/edited.md", "content": "edited"}');
  await waitFor(first, "Result: ");
  expect(readFileSync(join(root.path, "edited.md"), "utf8")).toBe("edited");
  expect(existsSync(join(root.path, "other.md"))).toBe(false);
  type(first, "save another note");
  await waitFor(first, prompts(3));
  type(first, "r");
  await waitFor(first, "reason (optional) › ");
  type(first, "not in this folder");
  await waitFor(first, /Result: .*not in this folder/);
  expect(existsSync(join(root.path, "other.md"))).toBe(false);

  // A slow turn: Ctrl-C cancels it (the stream stops), the prompt comes back.
  type(first, "tell me a long story");
  await waitFor(first, "once upon a time once upon");
  tmux("send-keys", "-t", first, "C-c");
  await waitFor(first, "cancelled");
  const requestsAfterCancel = server.requests.length;
  await new Promise((r) => setTimeout(r, 600));
  expect(pane(first)).not.toContain("THE END");

  // The second Ctrl-C exits after saving memory (the long-term extraction runs now).
  tmux("send-keys", "-t", first, "C-c");
  const closed = await waitFor(first, "EXITED", 60_000);
  expect(closed).toContain("memory saved");
  expect(closed).toContain("EXITED 0");
  expect(server.requests.slice(requestsAfterCancel).some(isMemoryExtraction)).toBe(true);
  mkdirSync(join(REPO, ".tmp"), { recursive: true });
  writeFileSync(join(REPO, ".tmp", "cli-chat-pane-1.txt"), closed);

  // A new process on the same ENGRAM_HOME: the fact and the project note are in its request.
  const second = `${socket}-b`;
  startChat(second);
  await waitFor(second, "› ");
  type(second, "what do you remember?");
  await waitFor(second, "I remember: you like green tea; notes live in notes.md.");
  type(second, "/exit");
  const end = await waitFor(second, "EXITED", 60_000);
  expect(end).toContain("EXITED 0");
  writeFileSync(join(REPO, ".tmp", "cli-chat-pane-2.txt"), end);
});
