/**
 * `@engram/cli`: the `engram` command, also usable as a library (`main(argv)`).
 * @packageDocumentation
 */
export { main, buildProgram } from "./cli.js";
export {
  type CliConfig,
  type ConfigSource,
  type LoadConfigOptions,
  type LoadedConfig,
  ENV_VARS,
  configFileSchema,
  describeConfig,
  engramHome,
  loadConfig,
} from "./config.js";
export { EXIT, exitCodeFor } from "./exit.js";
export { ReadOnlyBackend } from "./readonly-backend.js";
