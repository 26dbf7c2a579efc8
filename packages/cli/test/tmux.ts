/**
 * Driving `engram` in a real terminal: tmux runs the command (from its sources) in a 120×40 pane
 * of a private tmux server, keys are sent with send-keys and the screen is read with
 * capture-pane. The pane stays after the command exits and shows `EXITED <code>`.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ENGRAM_ARGV, REPO } from "./helpers.js";

export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A private tmux server for one test file. */
export class Terminal {
  readonly #socket = `engram-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

  tmux(...args: string[]): string {
    return execFileSync("tmux", ["-u", "-L", this.#socket, ...args], { encoding: "utf8" });
  }

  /** A session name unique to this server. */
  session(name: string): string {
    return `${this.#socket}-${name}`;
  }

  /** Starts `engram <args>` with `env` in a detached session (the script is written to `dir`). */
  start(session: string, options: { env: NodeJS.ProcessEnv; args: string[]; dir: string }): void {
    const exports = Object.entries(options.env)
      .filter(([k]) => /^[A-Z_][A-Z0-9_]*$/i.test(k))
      .map(([k, v]) => `export ${k}=${shellQuote(v ?? "")}`)
      .join("\n");
    const script = join(options.dir, `${session}.sh`);
    writeFileSync(
      script,
      `${exports}\ncd ${shellQuote(REPO)}\n${[...ENGRAM_ARGV, ...options.args].map(shellQuote).join(" ")}\necho "EXITED $?"\nsleep 600\n`,
    );
    this.tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "40", `bash ${shellQuote(script)}`);
  }

  /** The whole pane, scrollback included. */
  pane(session: string): string {
    return this.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", session);
  }

  /** Waits (bounded) until the pane shows `text`. */
  async waitFor(session: string, text: string | RegExp | ((screen: string) => boolean), ms = 60_000): Promise<string> {
    const until = Date.now() + ms;
    for (;;) {
      const screen = this.pane(session);
      if (typeof text === "string" ? screen.includes(text) : typeof text === "function" ? text(screen) : text.test(screen)) return screen;
      if (Date.now() > until) throw new Error(`pane never showed ${String(text)}:\n${screen}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Types a line and Enter. */
  type(session: string, text: string): void {
    this.tmux("send-keys", "-t", session, "-l", text);
    this.tmux("send-keys", "-t", session, "Enter");
  }

  /** Sends keys by name (`C-c`, `C-u`). */
  keys(session: string, ...keys: string[]): void {
    this.tmux("send-keys", "-t", session, ...keys);
  }

  /** Stops the server and every session. */
  close(): void {
    try {
      this.tmux("kill-server");
    } catch {
      // No session left.
    }
  }
}
