/**
 * The model of an `engram` invocation: `--model provider:model` through engram's resolver (AI SDK
 * provider packages the user installed, loaded as {@link commandImporter} says, never from the
 * project; `llama:<file.gguf>`, `ollama:`), or an OpenAI-compatible
 * server at `--base-url` (llama.cpp, Ollama, vLLM, LM Studio).
 * @module
 */
import { type ChatModel, ConfigError, OpenAICompatibleModel, parseModelString, resolveModel } from "engram";
import { type CliConfig, engramHome } from "./config.js";
import { commandImporter, installHint } from "./modules.js";
import { llamaModel } from "./llama-model.js";

/** The variable each AI SDK provider reads its key from. */
export const PROVIDER_KEY_VARS: Record<string, string[]> = {
  openai: ["OPENAI_API_KEY"],
  anthropic: ["ANTHROPIC_API_KEY"],
  google: ["GOOGLE_GENERATIVE_AI_API_KEY"],
  mistral: ["MISTRAL_API_KEY"],
  groq: ["GROQ_API_KEY"],
  xai: ["XAI_API_KEY"],
  deepseek: ["DEEPSEEK_API_KEY"],
  cohere: ["COHERE_API_KEY"],
  togetherai: ["TOGETHER_AI_API_KEY"],
  fireworks: ["FIREWORKS_API_KEY"],
  perplexity: ["PERPLEXITY_API_KEY"],
  cerebras: ["CEREBRAS_API_KEY"],
  azure: ["AZURE_API_KEY"],
};

/** The one-line message when no model is configured. */
export const NO_MODEL_MESSAGE =
  "no model configured: pass --model provider:model (e.g. --model openai:gpt-4.1 with OPENAI_API_KEY set, " +
  "or --model openai-compatible:<name> --base-url http://127.0.0.1:8080/v1, or --model llama:<file.gguf>), " +
  'or set ENGRAM_MODEL / ENGRAM_BASE_URL, or "model" in $ENGRAM_HOME/config.json';

/**
 * The configured model. Throws a `ConfigError` (exit code 2) when none is configured, when the
 * string is malformed, or when the provider's key variable is unset.
 */
export function createModel(config: CliConfig, env: NodeJS.ProcessEnv = process.env): ChatModel {
  const { model, baseUrl } = config;
  if (!model && !baseUrl) throw new ConfigError("model", NO_MODEL_MESSAGE);
  if (baseUrl) {
    // `--base-url` speaks the OpenAI protocol: the model is `openai-compatible:<name>` or a bare name.
    let name = model ?? "default";
    if (model?.includes(":")) {
      const spec = parseModelString(model);
      if (spec.provider !== "openai-compatible" && spec.provider !== "ollama") {
        throw new ConfigError(
          "baseUrl",
          `--base-url works with openai-compatible:<model> (or ollama:<model>), not ${JSON.stringify(model)}`,
        );
      }
      name = spec.model;
    }
    return new OpenAICompatibleModel({ baseURL: baseUrl, model: name, ...(config.apiKey && { apiKey: config.apiKey }) });
  }
  const spec = parseModelString(model as string);
  if (spec.provider === "llama") return llamaModel(config, spec.model);
  if (spec.provider === "openai-compatible" && !spec.baseURL) {
    throw new ConfigError("baseUrl", `${model} needs a server: add --base-url http://host:port/v1 (or set ENGRAM_BASE_URL)`);
  }
  const vars = PROVIDER_KEY_VARS[spec.provider];
  if (vars && !vars.some((v) => env[v])) {
    throw new ConfigError("model", `${model} needs an API key: set ${vars.join(" or ")}`);
  }
  const home = engramHome(env);
  return resolveModel(model as string, { importModule: commandImporter(home), installHint: installHint(home) });
}
