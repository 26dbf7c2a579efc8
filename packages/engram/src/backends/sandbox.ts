/**
 * Commands confined to a `FilesystemBackend`'s root, run by the native `engram-sandbox`
 * (Landlock, network, PID and mount namespaces, rlimits, a timeout). Linux only: elsewhere,
 * and where the kernel lacks a part, the answer is `unsupported` naming it — never an
 * unconfined run, unless the caller asks for one by name (`sandbox: "none"`).
 * @module
 */
import { loadNativeBinding } from "#node-access";
import type { ErrorData, Result } from "../core/types.js";
import type { ExecuteOptions, ExecuteResult } from "./protocol.js";

/** What the addon exports for the sandbox (Linux builds only: capabilities are found by method). */
interface RawSandboxBinding {
  sandboxExecute?(
    command: string,
    options: {
      root: string;
      cwd?: string;
      readOnly?: boolean;
      timeoutMs?: number;
      outputCap?: number;
      env?: string[];
      unconfined?: boolean;
    },
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
  /** `"none"` runs commands with no confinement at all: a command can read and write whatever
   * this process can and reach the network; only the scrubbed environment, the timeout (which
   * then reaches the command's process group, not processes that leave it) and the output cap
   * remain. The backend says so on stderr when it is made. Default: `"os"`, the kernel's
   * sandbox (Linux), or `unsupported` where there is none. */
  sandbox?: "os" | "none";
}

/** What a backend made with `sandbox: "none"` prints to stderr, once, when it is made. */
export function unconfinedWarning(root: string): string {
  return `engram: WARNING: commands run UNCONFINED under ${root} (execute: { sandbox: "none" }): they can read and write anything this process can, and reach the network.`;
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
        unconfined: options.sandbox === "none",
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
