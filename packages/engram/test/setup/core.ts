/** Loads the core the project asks for (`ENGRAM_CORE`) before each test file, as an
 * application does at start-up: synchronous helpers such as `redactSecrets` need a loaded core
 * on hosts that cannot load one synchronously (the WASM core). */
import { loadCore } from "../../src/core/loader.js";

await loadCore();
