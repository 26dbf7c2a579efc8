/**
 * Opening what a command needs, once: a configuration error is printed as one line and becomes
 * the command's exit code; storage is always closed.
 * @module
 */
import type { ChatModel } from "engram";
import type { Context } from "../context.js";
import { describeError, exitCodeForError } from "../exit.js";
import { createModel } from "../model.js";
import { type Storage, openStorage } from "../runtime.js";

/** Prints the error on stderr and returns its exit code. */
export function reportError(ctx: Context, e: unknown): number {
  ctx.error(describeError(e));
  return exitCodeForError(e);
}

/** The model and storage of `chat` / `run`, or the exit code after `fail` reported why not. */
export function openSession(
  ctx: Context,
  fail: (e: unknown) => number = (e) => reportError(ctx, e),
): { model: ChatModel; storage: Storage } | number {
  try {
    const model = createModel(ctx.loaded.config, ctx.env);
    return { model, storage: openStorage(ctx.loaded.config, ctx.loaded.home) };
  } catch (e) {
    return fail(e);
  }
}

/** Runs `fn` with the storage (no model); errors are reported, the storage is closed. */
export async function withStorage(ctx: Context, fn: (storage: Storage) => Promise<number>): Promise<number> {
  let storage: Storage;
  try {
    storage = openStorage(ctx.loaded.config, ctx.loaded.home);
  } catch (e) {
    return reportError(ctx, e);
  }
  try {
    return await fn(storage);
  } catch (e) {
    return reportError(ctx, e);
  } finally {
    storage.close();
  }
}
