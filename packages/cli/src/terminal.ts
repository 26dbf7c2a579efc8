/**
 * Terminal output: colours (off for `NO_COLOR`, `--no-color` and non-TTY streams), a spinner (only
 * on a TTY), and the compact rendering of an agent's events shared by `chat` and `run`.
 * @module
 */
import type { AgentEvent, ModelStage, ToolCall } from "engram";
import pc from "picocolors";
import { inert, inertLines } from "./render.js";

/** picocolors' functions, possibly disabled. */
export type Colors = ReturnType<typeof pc.createColors>;

/** A writable text stream (stdout, stderr, or a test buffer). */
export interface Out {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** Whether to colour `stream`: a TTY, no `NO_COLOR`, no `--no-color`. */
export function colorsFor(stream: Out, options: { color?: boolean; env?: NodeJS.ProcessEnv } = {}): Colors {
  const env = options.env ?? process.env;
  const enabled = options.color !== false && stream.isTTY === true && !("NO_COLOR" in env && env.NO_COLOR !== "") && env.TERM !== "dumb";
  return pc.createColors(enabled);
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** A one-line spinner; a no-op when the stream is not a TTY. */
export class Spinner {
  #timer: ReturnType<typeof setInterval> | undefined;
  #text = "";
  #frame = 0;
  #shown = false;

  constructor(
    private readonly out: Out,
    private readonly c: Colors,
  ) {}

  get active(): boolean {
    return this.#timer !== undefined;
  }

  start(text: string): void {
    if (!this.out.isTTY) return;
    this.#text = text;
    if (!this.#timer) {
      this.#timer = setInterval(() => this.#draw(), 80);
      this.#timer.unref?.();
    }
    this.#draw();
  }

  #draw(): void {
    const frame = FRAMES[this.#frame++ % FRAMES.length] ?? "-";
    this.out.write(`\r\x1b[2K${this.c.cyan(frame)} ${this.c.dim(this.#text)}`);
    this.#shown = true;
  }

  /** Stops and erases the spinner line. */
  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#shown) this.out.write("\r\x1b[2K");
    this.#shown = false;
  }
}

/** `1.2 kB` style sizes. */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  if (n < 1_000_000) return `${(n / 1000).toFixed(1)} kB`;
  return `${(n / 1_000_000).toFixed(1)} MB`;
}

/** The argument that says what a tool call is about (path, pattern, subagent). */
export function callTarget(call: ToolCall): string {
  const a = call.args ?? {};
  for (const key of ["file_path", "path", "pattern", "subagent_type", "description"]) {
    const v = a[key];
    if (typeof v === "string" && v !== "") return inert(v.length > 60 ? `${v.slice(0, 57)}…` : v);
  }
  return "";
}

const encoder = new TextEncoder();

/**
 * Renders agent events for a human: answer text as it streams, one line per tool call when it
 * ends (name, target, result size, time), a spinner while the model or a tool works.
 */
export class EventRenderer {
  readonly spinner: Spinner;
  #atLineStart = true;
  readonly #started = new Map<string, { call: ToolCall; at: number }>();

  constructor(
    /** Where the answer goes. */
    private readonly out: Out,
    /** Where tool lines, warnings and the spinner go (the same stream in `chat`). */
    private readonly status: Out,
    private readonly c: Colors,
  ) {
    this.spinner = new Spinner(status, c);
  }

  /** A turn starts: the model is working. */
  begin(label = "thinking"): void {
    this.spinner.start(label);
  }

  /** Ends the current answer line, if one is open. */
  newline(): void {
    this.spinner.stop();
    if (!this.#atLineStart) {
      this.out.write("\n");
      this.#atLineStart = true;
    }
  }

  #line(text: string): void {
    this.newline();
    this.status.write(`${text}\n`);
  }

  warn(message: string): void {
    this.#line(this.c.yellow(`! ${inert(message)}`));
  }

  event(ev: AgentEvent): void {
    // A subagent's run is framed by subagent_start / subagent_end; its own events carry `path`.
    if (ev.type === "subagent_start") {
      this.#line(this.c.dim(`▸ subagent ${inert(ev.name)}: ${oneLine(ev.task, 80)}`));
      this.spinner.start(`${inert(ev.name)} working`);
      return;
    }
    if (ev.type === "subagent_end") {
      this.#line(this.c.dim(`◂ subagent ${inert(ev.name)} · ${inert(ev.stopReason)}`));
      this.spinner.start("thinking");
      return;
    }
    const path = "path" in ev ? ev.path : undefined;
    const who = path ? this.c.dim(`${inert(path)} `) : "";
    if (path && ev.type === "model_delta") {
      // A subagent's text is its report to the parent, not the answer: show progress only.
      if (this.status.isTTY) this.spinner.start(`${inert(path)} writing`);
      return;
    }
    switch (ev.type) {
      case "model_delta": {
        if (ev.text === "") return;
        this.spinner.stop();
        this.out.write(inertLines(ev.text));
        this.#atLineStart = ev.text.endsWith("\n");
        return;
      }
      case "model_status": {
        // A spinner label only: it says what a slow local model is busy with.
        const label = stageLabel(ev.stage, ev.tokens);
        if (this.#atLineStart) this.spinner.start(path ? `${inert(path)} ${label}` : label);
        return;
      }
      case "tool_start": {
        this.newline();
        this.#started.set(ev.call.id, { call: ev.call, at: performance.now() });
        const label = `${inert(ev.call.name)} ${callTarget(ev.call)}`.trim();
        if (this.status.isTTY) this.spinner.start(label);
        else this.status.write(`${this.c.dim("→")} ${who}${label}\n`);
        return;
      }
      case "tool_end": {
        const started = this.#started.get(ev.call.id);
        this.#started.delete(ev.call.id);
        const ms = started ? Math.round(performance.now() - started.at) : 0;
        const target = callTarget(ev.call);
        const size = formatBytes(encoder.encode(ev.result).length);
        const mark = ev.isError ? this.c.red("✗") : this.c.green("✓");
        const detail = ev.isError ? this.c.red(firstLine(ev.result)) : this.c.dim(`${size} · ${ms} ms`);
        this.#line(`${mark} ${who}${this.c.bold(inert(ev.call.name))}${target ? ` ${target}` : ""} ${this.c.dim("·")} ${detail}`);
        const next = [...this.#started.values()].at(-1);
        if (next) this.spinner.start(`${inert(next.call.name)} ${callTarget(next.call)}`.trim());
        else this.spinner.start("thinking");
        return;
      }
      case "warning":
        this.warn(ev.message);
        return;
      case "interrupt":
      case "final":
        this.#started.clear();
        this.newline();
        return;
    }
  }
}

/** What a model's status event says, for the spinner. */
export function stageLabel(stage: ModelStage, tokens?: number): string {
  if (stage === "loading_model") return "loading the model";
  if (stage === "reading_prompt") return tokens === undefined ? "reading the prompt" : `reading the prompt (${tokens} tokens)`;
  return "writing";
}

function oneLine(text: string, max: number): string {
  const line = inert(text.replace(/\s+/g, " ").trim());
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function firstLine(text: string): string {
  const line = inert(text.split("\n", 1)[0] ?? "");
  return line.length > 100 ? `${line.slice(0, 97)}…` : line;
}
