/**
 * The entry of `LlamaCppModel`'s child process: it owns node-llama-cpp (one {@link LlamaEngine})
 * and serves the parent's requests over the IPC channel, one at a time. It ignores the terminal's
 * Ctrl-C (the parent decides what a Ctrl-C stops) and, when the parent goes away, ends at once
 * with SIGKILL: a normal exit would wait for the native prompt evaluation in progress.
 * @module
 */
import { type EngineRequest, LlamaEngine } from "./llama-engine.js";
import { type FromChild, readParentMessage, toWireError } from "./llama-protocol.js";

if (typeof process.send !== "function") {
  process.stderr.write("llama-child: start it through LlamaCppModel (it needs an IPC channel)\n");
  process.exit(2);
}

const die = () => process.kill(process.pid, "SIGKILL");
process.on("SIGINT", () => {});
process.on("disconnect", die);

let engine: LlamaEngine | undefined;
const running = new Map<number, AbortController>();
let queue: Promise<unknown> = Promise.resolve();

function send(message: FromChild): void {
  if (!process.connected) return;
  process.send?.(message, undefined, {}, (e: Error | null) => {
    if (e) die();
  });
}

function generate(id: number, request: EngineRequest, stream: boolean): void {
  const controller = new AbortController();
  running.set(id, controller);
  const run = async () => {
    if (!engine) throw new Error("llama-child: generate before load");
    const report = stream ? (event: Extract<FromChild, { type: "progress" }>["event"]) => send({ type: "progress", id, event }) : undefined;
    return engine.generate(request, controller.signal, report);
  };
  queue = queue
    .then(run)
    .then(
      (generated) => send({ type: "result", id, generated }),
      (e: unknown) => send({ type: "failed", id, error: toWireError(e) }),
    )
    .finally(() => running.delete(id));
}

process.on("message", (raw: unknown) => {
  const message = readParentMessage(raw);
  if (!message) return;
  if (message.type === "load") {
    if (engine) return;
    engine = new LlamaEngine(message.options);
    engine.load().then(
      (contextSize) => send({ type: "loaded", contextSize }),
      (e: unknown) => send({ type: "load_failed", error: toWireError(e) }),
    );
  } else if (message.type === "generate") generate(message.id, message.request, message.stream);
  else running.get(message.id)?.abort();
});
