#!/usr/bin/env node
/**
 * The `engram` executable.
 * @module
 */
import { main } from "./cli.js";

const code = await main(process.argv);
// Exit once stdout has drained, so piped output is complete and no idle handle keeps us alive.
process.exitCode = code;
process.stdout.write("", () => process.exit(code));
