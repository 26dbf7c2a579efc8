/**
 * The child process that runs a `LlamaCppModel`'s node-llama-cpp (`llama-child.ts`), seen from
 * the parent: it loads the model when started, runs generations sent to it, and can be killed at
 * any moment — which is how an abort stops llama.cpp in the middle of reading a prompt, and why
 * leaving never waits for one. It is killed with the parent (when the parent exits, and by itself
 * when the channel closes), and keeps the parent's event loop alive only while it works.
 * @module
 */
import { type ChildProcess, fork } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, extname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { EngineOptions, EngineRequest, Generated, Progress } from "./llama-engine.js";
import { type ToChild, type WireError, readChildMessage } from "./llama-protocol.js";
import { ModelError } from "./types.js";

/** The last bytes of the child's stderr kept for the error of a child that dies. */
const STDERR_TAIL = 2000;

/** Every child alive in this process: killed when it exits. */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function killOnExit(child: ChildProcess): void {
  live.add(child);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const c of live) c.kill("SIGKILL");
  });
}

/** What the package exports the child's entry as (for a bundle of this module, which has no file next to it). */
const CHILD_EXPORT = "engram/llama-child";

/**
 * The child's entry file: next to this module (`llama-child.js` in the package; `.ts`, run with
 * tsx, in the sources), else the package's `engram/llama-child` export.
 * @throws ModelError (`unknown_provider`) when neither exists.
 */
export function childEntry(): { file: string; execArgv: string[] } {
  const here = fileURLToPath(import.meta.url);
  const ext = extname(here);
  const beside = join(dirname(here), `llama-child${ext}`);
  const require = createRequire(here);
  if (existsSync(beside)) {
    if (ext !== ".ts") return { file: beside, execArgv: [] };
    return { file: beside, execArgv: ["--import", pathToFileURL(require.resolve("tsx")).href] };
  }
  try {
    return { file: require.resolve(CHILD_EXPORT), execArgv: [] };
  } catch (e) {
    throw new ModelError("unknown_provider", `LlamaCppModel: no ${beside} and no ${CHILD_EXPORT} to run the model in`, { cause: e });
  }
}

interface Pending {
  resolve: (g: Generated) => void;
  reject: (e: unknown) => void;
  onProgress: ((ev: Progress) => void) | undefined;
  /** The model has written its first token (it then stops at the next token when aborted). */
  writing: boolean;
}

/** One child process and its model. */
export class ModelProcess {
  /** Resolves to the loaded context's size; rejects when the model cannot load or the child dies. */
  readonly ready: Promise<number>;
  /** Resolves when the child has exited. */
  readonly exited: Promise<void>;
  #loaded = false;
  #alive = true;
  #stderr = "";
  #nextId = 0;
  #failure: ModelError | undefined;
  readonly #child: ChildProcess;
  readonly #pending = new Map<number, Pending>();
  #settleReady: { resolve: (size: number) => void; reject: (e: unknown) => void } | undefined;

  constructor(options: EngineOptions) {
    this.ready = new Promise((resolve, reject) => {
      this.#settleReady = { resolve, reject };
    });
    this.ready.catch(() => undefined);
    const { file, execArgv } = childEntry();
    this.#child = fork(file, [], { execArgv, stdio: ["ignore", "ignore", "pipe", "ipc"], serialization: "json" });
    killOnExit(this.#child);
    this.exited = new Promise((resolve) => this.#child.once("exit", () => resolve()));
    this.#child.stderr?.on("data", (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString("utf8")).slice(-STDERR_TAIL);
    });
    this.#child.on("message", (raw) => this.#receive(raw));
    this.#child.on("error", (e) =>
      this.#fail(new ModelError("server", `LlamaCppModel: the model process failed: ${e.message}`, { cause: e })),
    );
    this.#child.on("exit", (code, signal) =>
      this.#fail(
        new ModelError(
          "server",
          `LlamaCppModel: the model process ended unexpectedly (${signal ?? `exit code ${code}`})${this.#stderr.trim() ? `: ${this.#stderr.trim()}` : ""}`,
        ),
      ),
    );
    this.#send({ type: "load", options });
    this.#refresh();
  }

  /** The model has loaded (a request then starts without `loading_model`). */
  get loaded(): boolean {
    return this.#loaded;
  }

  /** The child runs and has not failed. */
  get alive(): boolean {
    return this.#alive;
  }

  /** Runs one generation; `onProgress` (when streaming) receives its status and text. */
  generate(request: EngineRequest, onProgress?: (ev: Progress) => void): { id: number; result: Promise<Generated> } {
    const id = ++this.#nextId;
    const result = new Promise<Generated>((resolve, reject) => {
      if (this.#failure) return reject(this.#failure);
      this.#pending.set(id, { resolve, reject, onProgress, writing: false });
    });
    if (!this.#failure) this.#send({ type: "generate", id, request, stream: onProgress !== undefined });
    this.#refresh();
    return { id, result };
  }

  /** Asks the child to stop generation `id`; whether it has written a token yet (it stops then at the next one). */
  abort(id: number): boolean {
    this.#send({ type: "abort", id });
    return this.#pending.get(id)?.writing ?? false;
  }

  /** Whether generation `id` still waits for its answer. */
  pending(id: number): boolean {
    return this.#pending.has(id);
  }

  /** Kills the child now (SIGKILL); what it was doing fails with `reason`. */
  kill(reason: ModelError): void {
    this.#fail(reason);
    // Kept alive until its exit is seen, so that `exited` settles.
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.ref();
    this.#child.kill("SIGKILL");
  }

  #send(message: ToChild): void {
    if (!this.#child.connected) return;
    this.#child.send(message, (e) => {
      if (e) this.kill(new ModelError("server", `LlamaCppModel: the model process cannot be reached: ${e.message}`, { cause: e }));
    });
  }

  #receive(raw: unknown): void {
    const message = readChildMessage(raw);
    if (!message) {
      this.kill(new ModelError("bad_response", "LlamaCppModel: the model process sent a malformed message"));
      return;
    }
    switch (message.type) {
      case "loaded":
        this.#loaded = true;
        this.#settleReady?.resolve(message.contextSize);
        this.#refresh();
        break;
      case "load_failed":
        this.kill(wireError(message.error));
        break;
      case "progress": {
        const p = this.#pending.get(message.id);
        if (p && message.event.type === "status" && message.event.stage === "writing") p.writing = true;
        p?.onProgress?.(message.event);
        break;
      }
      case "result":
      case "failed": {
        const p = this.#pending.get(message.id);
        this.#pending.delete(message.id);
        if (message.type === "result") p?.resolve(message.generated);
        else p?.reject(wireError(message.error));
        this.#refresh();
        break;
      }
    }
  }

  #fail(error: ModelError): void {
    if (this.#failure) return;
    this.#failure = error;
    this.#alive = false;
    live.delete(this.#child);
    this.#settleReady?.reject(error);
    for (const p of this.#pending.values()) p.reject(error);
    this.#pending.clear();
    this.#refresh();
  }

  /** Keeps the parent alive while the child loads or generates, not while it idles. */
  #refresh(): void {
    const busy = this.#alive && (!this.#loaded || this.#pending.size > 0);
    const handles = [this.#child, this.#child.channel, this.#child.stderr as { ref?(): void; unref?(): void } | null];
    for (const h of handles) {
      if (busy) h?.ref?.();
      else h?.unref?.();
    }
  }
}

function wireError(error: WireError): ModelError {
  return new ModelError(error.code, error.message);
}
