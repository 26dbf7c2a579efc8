/**
 * Commands confined to a `FilesystemBackend`'s root, run by the native `engram-sandbox`
 * (Landlock, network, PID and mount namespaces, rlimits, a timeout). Linux only: elsewhere,
 * and where the kernel lacks a part, the answer is `unsupported` naming it — never an
 * unconfined run.
 * @module
 */
import { loadNativeBinding } from "#node-access";
import type { ErrorData, Result } from "../core/types.js";
import type { ExecuteOptions, ExecuteResult } from "./protocol.js";

/** What the addon exports for the sandbox (Linux builds only: capabilities are found by method). */
interface RawSandboxBinding {
  sandboxExecute?(
    command: string,
    options: { root: string; cwd?: string; readOnly?: boolean; timeoutMs?: number; outputCap?: number; env?: string[] },
    cancel: { cancel(): void },
  ): Promise<RawOutcome | { error: ErrorData }>;
  SandboxCancel?: new () => { cancel(): void };
}

interface RawOutcome {
  output: string;
  exitCode?: number | null;
  truncated: boolean;
  timedOut: boolean;
  cancelled: boolean;
}

/** Defaults of a sandboxed `FilesystemBackend`'s commands. */
export interface SandboxDefaults {
  /** Default: 120_000 (2 minutes). */
  timeoutMs?: number;
  /** Bytes of output kept, head and tail. Default: 30_000. */
  maxOutputBytes?: number;
  /** Commands may read the root but change nothing in it (their `HOME` and `TMPDIR`, private
   * scratch directories, stay writable). Default: `false`. */
  readOnly?: boolean;
}

/** Runs `command` beneath the host directory `root`; `cwd` is a host directory beneath it. */
export async function runSandboxed(
  root: string,
  cwd: string,
  command: string,
  options: ExecuteOptions & SandboxDefaults,
): Promise<Result<ExecuteResult>> {
  const binding = loadNativeBinding() as unknown as RawSandboxBinding;
  if (!binding.sandboxExecute || !binding.SandboxCancel) {
    return { error: { code: "unsupported", message: "execute: the sandbox is available on Linux only" } };
  }
  if (options.signal?.aborted) {
    return { output: "", exitCode: null, truncated: false, timedOut: false, cancelled: true };
  }
  const cancel = new binding.SandboxCancel();
  const onAbort = () => cancel.cancel();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const raw = await binding.sandboxExecute(
      command,
      {
        root,
        cwd,
        readOnly: options.readOnly === true,
        timeoutMs: options.timeoutMs ?? 120_000,
        outputCap: options.maxOutputBytes ?? 30_000,
        env: Object.entries(options.env ?? {}).map(([name, value]) => `${name}=${value}`),
      },
      cancel,
    );
    if ("error" in raw) return { error: raw.error };
    return {
      output: raw.output,
      exitCode: raw.exitCode ?? null,
      truncated: raw.truncated,
      timedOut: raw.timedOut,
      cancelled: raw.cancelled,
    };
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
}
