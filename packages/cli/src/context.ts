/**
 * What every command receives: the loaded configuration and the output streams.
 * @module
 */
import type { LoadedConfig } from "./config.js";
import { EXIT } from "./exit.js";
import { inert } from "./render.js";
import { type Colors, type Out, colorsFor } from "./terminal.js";

/** The per-invocation context. */
export interface Context {
  loaded: LoadedConfig;
  stdout: Out;
  stderr: Out;
  env: NodeJS.ProcessEnv;
  /** Colours for a stream (off for NO_COLOR, --no-color, non-TTY). */
  colors(stream: Out): Colors;
  /** Prints `engram: <message>` on stderr, the message on one line and inert (see {@link inert}). */
  error(message: string): void;
  /** Prints `warning: <message>` on stderr, the message on one line and inert. */
  warn(message: string): void;
  /** Prints a usage error and returns {@link EXIT.usage}. */
  usage(message: string): number;
}

/** Builds a context over the process streams. */
export function createContext(loaded: LoadedConfig, options: { color?: boolean; env?: NodeJS.ProcessEnv } = {}): Context {
  const env = options.env ?? process.env;
  const colorOption = options.color === undefined ? {} : { color: options.color };
  const ctx: Context = {
    loaded,
    stdout: process.stdout,
    stderr: process.stderr,
    env,
    colors: (stream) => colorsFor(stream, { ...colorOption, env }),
    error(message) {
      ctx.stderr.write(`${ctx.colors(ctx.stderr).red("engram:")} ${inert(message)}\n`);
    },
    warn(message) {
      ctx.stderr.write(`${ctx.colors(ctx.stderr).yellow("warning:")} ${inert(message)}\n`);
    },
    usage(message) {
      ctx.error(message);
      return EXIT.usage;
    },
  };
  return ctx;
}
