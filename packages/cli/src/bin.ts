#!/usr/bin/env node
/**
 * The `engram` executable.
 * @module
 */
import { main } from "./cli.js";

// A reader that goes away (`engram run --json | head -1`) is no failure of the command: the run
// goes on and saves its thread, what it would print is dropped (instead of an EPIPE crash).
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code !== "EPIPE") throw e;
  });
}

const code = await main(process.argv);
// Exit once stdout has drained, so piped output is complete and no idle handle keeps us alive.
process.exitCode = code;
process.stdout.write("", () => process.exit(code));
