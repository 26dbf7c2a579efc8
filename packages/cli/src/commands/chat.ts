/**
 * `engram chat`: an interactive session on one thread. The answer streams as it arrives, each
 * tool call is shown when it ends, reviews are prompted (approve / edit the arguments as JSON /
 * reject with a reason). Ctrl-C cancels the current turn (its signal reaches the model and the
 * tools); a second Ctrl-C exits after `agent.close()` has flushed pending memory updates.
 * @module
 */
import { type Interface, createInterface } from "node:readline";
import { type AgentInput, type ChatModel, type Decision, type Interrupt, type InterruptedCall, type StopReason, resume } from "engram";
import type { Context } from "../context.js";
import { EXIT, describeError, exitCodeForError } from "../exit.js";
import { maskUrlCredentials } from "../masking.js";
import { Permissions } from "../permissions.js";
import { closeAgent, openAgent } from "../runtime.js";
import { inert, inertLines, jsonText } from "../render.js";
import { EventRenderer, callTarget } from "../terminal.js";
import { newThreadId, threadIdProblem } from "../threads-id.js";
import { UserThreads } from "../user-threads.js";
import { runState, runStateNote } from "../interrupted-run.js";
import { openSession } from "./open.js";
import { rewindCommand } from "./thread-history.js";

/** Options of `engram chat`. */
export interface ChatCommandOptions {
  thread?: string;
}

type Asked = { kind: "line"; text: string } | { kind: "cancelled" } | { kind: "closed" };

/** Line input over readline: lines typed ahead are queued; a prompt can be cancelled. */
class LineInput {
  readonly #rl: Interface;
  readonly #queue: string[] = [];
  #waiter: ((a: Asked) => void) | undefined;
  #closed = false;

  constructor(rl: Interface) {
    this.#rl = rl;
    rl.on("line", (text) => {
      const w = this.#waiter;
      this.#waiter = undefined;
      if (w) w({ kind: "line", text });
      else this.#queue.push(text);
    });
    rl.on("close", () => {
      this.#closed = true;
      this.cancel({ kind: "closed" });
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  get waiting(): boolean {
    return this.#waiter !== undefined;
  }

  ask(prompt: string, prefill?: string): Promise<Asked> {
    const queued = this.#queue.shift();
    if (queued !== undefined) return Promise.resolve({ kind: "line", text: queued });
    if (this.#closed) return Promise.resolve({ kind: "closed" });
    this.#rl.setPrompt(prompt);
    this.#rl.prompt();
    if (prefill) this.#rl.write(prefill);
    return new Promise((resolve) => {
      this.#waiter = resolve;
    });
  }

  cancel(answer: Asked = { kind: "cancelled" }): void {
    const w = this.#waiter;
    this.#waiter = undefined;
    w?.(answer);
  }
}

const HELP = [
  "/help            this help",
  "/thread          the current thread id",
  "/new             start a new thread",
  "/review          decide the review this thread waits for",
  "/rewind [step]   the thread's recent steps; with a step, set the thread back to it",
  "/exit            save memory and leave (also Ctrl-D, or Ctrl-C twice)",
].join("\n");

/** Runs the interactive session; resolves to the exit code. */
export async function chatCommand(ctx: Context, options: ChatCommandOptions): Promise<number> {
  const { config } = ctx.loaded;
  const badThread = threadIdProblem(options.thread, config.user);
  if (badThread) return ctx.usage(badThread);
  const opened = openSession(ctx);
  if (typeof opened === "number") return opened;
  const { model, storage } = opened;
  const c = ctx.colors(ctx.stdout);
  const renderer = new EventRenderer(ctx.stdout, ctx.stdout, c);
  // Memory's diagnostics (a refused fact, a failed extraction) never cut into an answer: those
  // that come while a turn streams are shown when it ends.
  const heldNotes: string[] = [];
  const agent = openAgent(storage, model, (m) => (turn ? heldNotes.push(m) : renderer.warn(m)));
  const permissions = new Permissions(config.permissions);
  let threadId = options.thread ?? newThreadId();
  const threads = UserThreads.of(config.user, ctx.env);
  // The thread's checkpoint key: the user's saved thread of that name, else a new one.
  let threadKey = threads.key(threadId);
  const print = (text: string) => {
    renderer.newline();
    ctx.stdout.write(`${text}\n`);
  };

  const tty = process.stdin.isTTY === true && process.stdout.isTTY === true;
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: tty, historySize: 200 });
  const input = new LineInput(rl);

  let turn: AbortController | undefined;
  let reviewing = false;
  let lastWasSigint = false;
  let exitRequested = false;
  const onSigint = () => {
    if (turn) {
      if (turn.signal.aborted) {
        exitRequested = true;
        return;
      }
      turn.abort();
      lastWasSigint = true;
      return;
    }
    if (reviewing) {
      lastWasSigint = true;
      input.cancel();
      return;
    }
    if (tty && rl.line !== "") {
      rl.write(null, { ctrl: true, name: "u" });
      return;
    }
    if (lastWasSigint || !tty) {
      exitRequested = true;
      if (tty) ctx.stdout.write("\n"); // keep the prompt line on screen
      input.cancel({ kind: "closed" });
      return;
    }
    lastWasSigint = true;
    input.cancel();
  };
  rl.on("SIGINT", onSigint);
  process.on("SIGINT", onSigint);

  // A model that loads (a llama: file, a provider package) loads now, while the user types; one
  // that cannot ends the session with its error, instead of failing every turn.
  let loadFailure: unknown;
  preload(model)?.catch((e: unknown) => {
    loadFailure = e;
    exitRequested = true;
    input.cancel({ kind: "closed" });
  });

  const root = config.root ? ` · root ${inert(config.root)}${config.write ? "" : " (read-only)"}` : "";
  // Where the conversation goes, the password of the server's URL masked.
  const server = config.baseUrl ? ` at ${inert(maskUrlCredentials(config.baseUrl))}` : "";
  print(c.bold("engram chat") + c.dim(` · ${inert(model.id)}${server} · user ${inert(config.user)} · thread ${inert(threadId)}${root}`));
  print(c.dim("Ctrl-C cancels a turn, twice exits · /help"));

  /** Asks for decisions on every interrupted call; undefined when the review was cancelled. */
  const review = async (interrupt: Interrupt): Promise<Record<string, Decision> | undefined> => {
    reviewing = true;
    try {
      const decisions: Record<string, Decision> = {};
      for (const call of interrupt.toolCalls) {
        const decision = permissions.decide(call) ?? (await reviewCall(call));
        if (!decision) return undefined;
        decisions[call.id] = decision;
      }
      return decisions;
    } finally {
      reviewing = false;
    }
  };

  const reviewCall = async (call: InterruptedCall): Promise<Decision | undefined> => {
    const who = call.subagent ? c.dim(` (subagent ${inert(call.subagent.name)}, ${inert(call.subagent.path)})`) : "";
    print(`${c.yellow("?")} ${c.bold("review")} ${c.bold(inert(call.name))} ${callTarget(call)}${who}`);
    print(inertLines(indent(previewArgs(call.args))));
    const choices = call.allow.map((d) => (d === "approve" ? "[a]pprove" : d === "edit" ? "[e]dit" : "[r]eject")).join(" · ");
    for (;;) {
      const answer = await input.ask(`${choices} › `);
      if (answer.kind !== "line") return undefined;
      const key = answer.text.trim().toLowerCase();
      if ((key === "a" || key === "approve" || key === "y") && call.allow.includes("approve")) return { type: "approve" };
      if ((key === "e" || key === "edit") && call.allow.includes("edit")) {
        for (;;) {
          const edited = await input.ask("arguments (JSON) › ", tty ? jsonText(call.args) : undefined);
          if (edited.kind !== "line") return undefined;
          try {
            const args: unknown = JSON.parse(edited.text);
            if (typeof args !== "object" || args === null || Array.isArray(args)) throw new Error("must be a JSON object");
            return { type: "edit", args: args as Record<string, unknown> };
          } catch (e) {
            print(c.red(`not valid: ${inert(e instanceof Error ? e.message : String(e))}`));
          }
        }
      }
      if ((key === "r" || key === "reject" || key === "n") && call.allow.includes("reject")) {
        const reason = await input.ask("reason (optional) › ");
        if (reason.kind !== "line") return undefined;
        const message = reason.text.trim();
        return message ? { type: "reject", message } : { type: "reject" };
      }
      print(c.dim(`answer ${choices}`));
    }
  };

  /** One turn (with its reviews); the agent's events are rendered as they come. */
  const runTurn = async (first: AgentInput): Promise<void> => {
    let next: AgentInput = first;
    for (;;) {
      const controller = new AbortController();
      turn = controller;
      let stopReason: StopReason = "error";
      let interrupt: Interrupt | undefined;
      renderer.begin();
      try {
        for await (const ev of agent.stream(next, { threadId: threadKey, userId: config.user, signal: controller.signal })) {
          renderer.event(ev);
          if (ev.type === "final") {
            stopReason = ev.stopReason;
            interrupt = ev.output.interrupt;
          }
        }
      } catch (e) {
        renderer.newline();
        if (stopReason === "cancelled" || controller.signal.aborted) print(c.yellow("cancelled"));
        else print(c.red(`error: ${inert(describeError(e))}`));
        return;
      } finally {
        turn = undefined;
        for (const note of heldNotes.splice(0)) renderer.warn(note);
      }
      if (stopReason === "interrupted" && interrupt) {
        const decisions = await review(interrupt);
        if (!decisions) {
          print(c.yellow(`review cancelled: the thread waits (/review, or engram threads resume ${inert(threadId)})`));
          return;
        }
        next = resume(decisions);
        continue;
      }
      if (stopReason !== "done") print(c.yellow(`stopped: ${inert(stopReason.replace("_", " "))}`));
      return;
    }
  };

  const pendingReview = async () => (await storage.checkpointer.get(threadKey))?.interrupt;

  let code: number = EXIT.ok;
  try {
    threadKey = await threads.keyFor(storage.checkpointer, threadId);
    const waiting = await pendingReview();
    if (waiting) {
      print(c.yellow("this thread waits for a review"));
      const decisions = await review(waiting);
      if (decisions) await runTurn(resume(decisions));
    } else {
      // A run that died under way goes on from its last committed step before anything new.
      const run = await runState(storage.checkpointer, threadKey, (await storage.checkpointer.get(threadKey))?.revision);
      if (run?.state === "interrupted") {
        print(c.yellow(`this thread's run was ${runStateNote(run)}: resuming it`));
        await runTurn({ messages: [] });
      }
    }
    while (!exitRequested) {
      const asked = await input.ask(c.bold(c.cyan("› ")));
      if (asked.kind === "closed") break;
      if (asked.kind === "cancelled") {
        if (!exitRequested) print(c.dim("(Ctrl-C again to exit)"));
        continue;
      }
      const text = asked.text.trim();
      if (text === "") continue;
      lastWasSigint = false;
      if (text.startsWith("/")) {
        const [command] = text.split(/\s+/);
        if (command === "/exit" || command === "/quit") break;
        if (command === "/help") print(HELP);
        else if (command === "/thread") print(inert(threadId));
        else if (command === "/new") {
          threadId = newThreadId();
          threadKey = threads.key(threadId);
          print(c.dim(`thread ${inert(threadId)}`));
        } else if (command === "/review") {
          const w = await pendingReview();
          if (!w) print(c.dim("nothing to review"));
          else {
            const decisions = await review(w);
            if (decisions) await runTurn(resume(decisions));
          }
        } else if (command === "/rewind") {
          for (const line of await rewindCommand(ctx, storage, threadKey, text.split(/\s+/)[1])) print(line);
        } else print(c.red(`unknown command ${inert(command ?? "")}`) + c.dim(" (/help)"));
        continue;
      }
      await runTurn({ messages: [{ role: "user", content: asked.text }] });
    }
    if (loadFailure !== undefined) throw loadFailure;
  } catch (e) {
    print(c.red(`error: ${inert(describeError(e))}`));
    code = exitCodeForError(e);
  } finally {
    rl.off("SIGINT", onSigint);
    process.off("SIGINT", onSigint);
    if (!input.closed) rl.close();
    renderer.newline();
    renderer.spinner.start("saving memory");
    try {
      const waiting = await closeAgent(agent, config.user);
      renderer.spinner.stop();
      const later = waiting > 0 ? ` (${waiting} conversation${waiting === 1 ? "" : "s"} to learn from next time)` : "";
      ctx.stdout.write(c.dim(`memory saved${later} · thread ${inert(threadId)}\n`));
    } catch (e) {
      renderer.spinner.stop();
      ctx.stdout.write(c.red(`memory could not be saved: ${inert(describeError(e))}\n`));
      code = EXIT.error;
    }
    storage.close();
  }
  return code;
}

/** Starts loading a model that has a `load()` (see {@link chatCommand}), else `undefined`. */
function preload(model: ChatModel): Promise<unknown> | undefined {
  const load = (model as { load?: () => Promise<unknown> }).load;
  return typeof load === "function" ? load.call(model) : undefined;
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n");
}

/** The arguments as JSON, long strings and long listings cut for the screen. */
function previewArgs(args: Record<string, unknown>): string {
  const cut = (v: unknown): unknown => (typeof v === "string" && v.length > 400 ? `${v.slice(0, 400)}… (${v.length} chars)` : v);
  const lines = JSON.stringify(Object.fromEntries(Object.entries(args ?? {}).map(([k, v]) => [k, cut(v)])), null, 2).split("\n");
  return lines.length > 24 ? [...lines.slice(0, 24), `… (${lines.length - 24} more lines)`].join("\n") : lines.join("\n");
}
