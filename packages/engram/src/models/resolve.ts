/**
 * `resolveModel`: one entry point for every way a user names a model — a {@link ChatModel}, an
 * AI SDK provider model, or a `"provider:model"` string.
 * @module
 */
import { EngramError } from "../errors.js";
import { type LanguageModelLike, fromLanguageModel, isLanguageModelLike } from "./ai-sdk.js";
import { isPlainObject } from "./normalize.js";
import { OpenAICompatibleModel } from "./openai-compatible.js";
import { type ChatModel, type ModelRequest, type ModelResult, type ModelStreamEvent, ModelError } from "./types.js";

/** Where a provider's AI SDK factory lives: `import { <exportName> } from "<packageName>"`. */
export interface ModelProviderPackage {
  packageName: string;
  exportName: string;
}

/**
 * The `"provider:model"` prefixes resolved through AI SDK provider packages. The package is
 * imported on first use and must be installed next to `engram` (`npm install @ai-sdk/openai`);
 * with strict package managers (pnpm) pass the provider's model object instead.
 */
export const MODEL_PROVIDERS: Readonly<Record<string, ModelProviderPackage>> = Object.freeze({
  openai: { packageName: "@ai-sdk/openai", exportName: "openai" },
  anthropic: { packageName: "@ai-sdk/anthropic", exportName: "anthropic" },
  google: { packageName: "@ai-sdk/google", exportName: "google" },
  "google-vertex": { packageName: "@ai-sdk/google-vertex", exportName: "vertex" },
  azure: { packageName: "@ai-sdk/azure", exportName: "azure" },
  "amazon-bedrock": { packageName: "@ai-sdk/amazon-bedrock", exportName: "bedrock" },
  mistral: { packageName: "@ai-sdk/mistral", exportName: "mistral" },
  groq: { packageName: "@ai-sdk/groq", exportName: "groq" },
  xai: { packageName: "@ai-sdk/xai", exportName: "xai" },
  deepseek: { packageName: "@ai-sdk/deepseek", exportName: "deepseek" },
  cohere: { packageName: "@ai-sdk/cohere", exportName: "cohere" },
  togetherai: { packageName: "@ai-sdk/togetherai", exportName: "togetherai" },
  fireworks: { packageName: "@ai-sdk/fireworks", exportName: "fireworks" },
  perplexity: { packageName: "@ai-sdk/perplexity", exportName: "perplexity" },
  cerebras: { packageName: "@ai-sdk/cerebras", exportName: "cerebras" },
});

/** Base URL of `"ollama:<model>"` when the string names none: Ollama's OpenAI-compatible API. */
export const DEFAULT_OLLAMA_BASE_URL = "http://127.0.0.1:11434/v1";

/** A parsed model string. */
export interface ModelSpec {
  /** The part before the first `:`, e.g. `"openai"`, `"openai-compatible"`. */
  provider: string;
  /** The rest, e.g. `"gpt-4.1"`, `"llama3.1:8b"` (without a trailing `@<baseURL>`). */
  model: string;
  /** For `openai-compatible` and `ollama` only: the URL after the last `@http…`. */
  baseURL?: string;
}

/**
 * Parses `"provider:model"`, and `"openai-compatible:<model>@<baseURL>"` /
 * `"ollama:<model>[@<baseURL>]"` (the model may itself contain `:` and `@`; the base URL starts
 * at the last `@http://` or `@https://`).
 * @throws ModelError (`unknown_provider`) when the string has no provider or no model.
 */
export function parseModelString(spec: string): ModelSpec {
  const colon = spec.indexOf(":");
  const provider = colon > 0 ? spec.slice(0, colon).trim() : "";
  let model = colon > 0 ? spec.slice(colon + 1).trim() : "";
  if (!provider || !model) {
    throw new ModelError("unknown_provider", `Model string ${JSON.stringify(spec)} is not "provider:model" (e.g. "openai:gpt-4.1")`);
  }
  const parsed: ModelSpec = { provider, model };
  if (provider === "openai-compatible" || provider === "ollama") {
    const at = Math.max(model.lastIndexOf("@http://"), model.lastIndexOf("@https://"));
    if (at >= 0) {
      parsed.baseURL = model.slice(at + 1);
      model = model.slice(0, at);
      parsed.model = model;
    }
    if (!model) throw new ModelError("unknown_provider", `Model string ${JSON.stringify(spec)} names no model before "@"`);
  }
  return parsed;
}

/** Options of {@link resolveModel} and {@link loadModel}. */
export interface ResolveModelOptions {
  /** Loads a provider package by name. Default: a dynamic `import(packageName)` from engram's
   * own location. Override for bundlers or strict package layouts. */
  importModule?: (packageName: string) => Promise<unknown>;
  /** What the error of a provider package that is not installed tells the user to run. Default:
   * `npm install <packageName>`. */
  installHint?: (packageName: string) => string;
}

/**
 * Turns what the user passed as a model into a {@link ChatModel}, synchronously:
 * - a `ChatModel` (an object with a string `id` and `invoke` / `stream` methods) is returned as is;
 * - an AI SDK provider model is adapted with {@link fromLanguageModel};
 * - `"openai-compatible:<model>@<baseURL>"` becomes an {@link OpenAICompatibleModel} (no API key);
 * - `"ollama:<model>[@<baseURL>]"` likewise, at {@link DEFAULT_OLLAMA_BASE_URL} by default;
 * - `"llama:<path/to/model.gguf>"` becomes a `LlamaCppModel` (Node only, from `engram/llama`,
 *   which needs the optional `node-llama-cpp`), imported on its first call;
 * - `"<provider>:<model>"` for a provider in {@link MODEL_PROVIDERS} becomes a model that
 *   imports the provider package on its first call (so a missing package surfaces there, as
 *   `unknown_provider`; use {@link loadModel} to fail up front).
 *
 * @throws ModelError (`unknown_provider`) for a malformed string or an unknown provider.
 * @throws EngramError (`unsupported`) for anything else (or an unsupported AI SDK specification).
 */
export function resolveModel(model: ChatModel | LanguageModelLike | string, options: ResolveModelOptions = {}): ChatModel {
  return resolve(model, options).model;
}

/**
 * Like {@link resolveModel}, but imports a provider package now, so a missing package
 * rejects here with `unknown_provider` rather than on the first call.
 */
export async function loadModel(model: ChatModel | LanguageModelLike | string, options: ResolveModelOptions = {}): Promise<ChatModel> {
  const resolved = resolve(model, options);
  return resolved.load ? resolved.load() : resolved.model;
}

/** A resolved model, and for one imported on first use, the import to run now. */
interface Resolved {
  model: ChatModel;
  load?: () => Promise<ChatModel>;
}

function resolve(model: ChatModel | LanguageModelLike | string, options: ResolveModelOptions): Resolved {
  if (typeof model === "string") return resolveString(model, options);
  if (isChatModel(model)) return { model };
  if (isLanguageModelLike(model)) return { model: fromLanguageModel(model) };
  throw new EngramError("unsupported", 'A model must be a ChatModel, an AI SDK language model or a "provider:model" string');
}

function lazily(id: string, create: () => Promise<ChatModel>): Resolved {
  const model = new ProviderModel(id, create);
  return { model, load: () => model.load() };
}

/** True for an object with a string `id` and `invoke` / `stream` methods. */
export function isChatModel(value: unknown): value is ChatModel {
  return isPlainObject(value) && typeof value.id === "string" && typeof value.invoke === "function" && typeof value.stream === "function";
}

function resolveString(spec: string, options: ResolveModelOptions): Resolved {
  const { provider, model, baseURL } = parseModelString(spec);
  if (provider === "openai-compatible") {
    if (!baseURL) {
      throw new ModelError(
        "unknown_provider",
        `Model string ${JSON.stringify(spec)} needs a base URL: "openai-compatible:<model>@http://host:port/v1"`,
      );
    }
    return { model: new OpenAICompatibleModel({ baseURL, model }) };
  }
  if (provider === "ollama") return { model: new OpenAICompatibleModel({ baseURL: baseURL ?? DEFAULT_OLLAMA_BASE_URL, model }) };
  if (provider === "llama") return lazily(spec, () => loadLlama(model, spec, options.importModule ?? defaultImport));
  const pkg = Object.hasOwn(MODEL_PROVIDERS, provider) ? MODEL_PROVIDERS[provider] : undefined;
  if (!pkg) {
    const known = [...Object.keys(MODEL_PROVIDERS), "openai-compatible", "ollama", "llama"].join(", ");
    throw new ModelError(
      "unknown_provider",
      `Unknown model provider ${JSON.stringify(provider)} in ${JSON.stringify(spec)} (known: ${known})`,
    );
  }
  return lazily(spec, () => loadProvider(spec, model, pkg, options));
}

const defaultImport = (packageName: string): Promise<unknown> => import(packageName);

/** The module of `"llama:"` models, imported by name so that bundlers leave it (and node-llama-cpp) out. */
const LLAMA_MODULE = "engram/llama";

/** A `LlamaCppModel` for `"llama:<path>"`, from the Node-only `engram/llama` module. */
async function loadLlama(modelPath: string, spec: string, importModule: (name: string) => Promise<unknown>): Promise<ChatModel> {
  let mod: unknown;
  try {
    mod = await importModule(LLAMA_MODULE);
  } catch (e) {
    throw new ModelError(
      "unknown_provider",
      `Model ${JSON.stringify(spec)} needs ${LLAMA_MODULE} (Node only): ${e instanceof Error ? e.message : String(e)}`,
      {
        cause: e,
      },
    );
  }
  const Model = isPlainObject(mod) || typeof mod === "function" ? (mod as Record<string, unknown>).LlamaCppModel : undefined;
  if (typeof Model !== "function") throw new ModelError("unknown_provider", `${LLAMA_MODULE} does not export LlamaCppModel`);
  return new (Model as new (o: { modelPath: string; id: string }) => ChatModel)({ modelPath, id: spec });
}

/** A model named by a string whose implementation is imported on first use. */
class ProviderModel implements ChatModel {
  readonly #create: () => Promise<ChatModel>;
  #loading: Promise<ChatModel> | undefined;

  constructor(
    readonly id: string,
    create: () => Promise<ChatModel>,
  ) {
    this.#create = create;
  }

  /** The adapted provider model; a failed load is retried on the next call. */
  load(): Promise<ChatModel> {
    this.#loading ??= this.#create().catch((e: unknown) => {
      this.#loading = undefined;
      throw e;
    });
    return this.#loading;
  }

  async invoke(request: ModelRequest): Promise<ModelResult> {
    return (await this.load()).invoke(request);
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    yield* (await this.load()).stream(request);
  }

  /** The adapted model's input budget (importing it, but not loading a local model's weights). */
  async maxInputTokens(): Promise<number | undefined> {
    return (await this.load()).maxInputTokens?.();
  }
}

/** The AI SDK model of a `"provider:model"` string, from its provider package. */
async function loadProvider(id: string, modelId: string, pkg: ModelProviderPackage, options: ResolveModelOptions): Promise<ChatModel> {
  const { packageName, exportName } = pkg;
  const { importModule = defaultImport, installHint = (name: string) => `npm install ${name}` } = options;
  let mod: unknown;
  try {
    mod = await importModule(packageName);
  } catch (e) {
    const missing = isModuleNotFound(e, packageName);
    const reason = missing ? "is not installed" : `could not be loaded (${e instanceof Error ? e.message : String(e)})`;
    throw new ModelError(
      "unknown_provider",
      `Model ${JSON.stringify(id)} needs the package ${packageName}, which ${reason}: ${installHint(packageName)}`,
      { cause: e },
    );
  }
  const factory = isPlainObject(mod) || typeof mod === "function" ? (mod as Record<string, unknown>)[exportName] : undefined;
  if (typeof factory !== "function") {
    throw new ModelError("unknown_provider", `The package ${packageName} does not export a provider named ${exportName}`);
  }
  const languageModel: unknown = factory(modelId);
  if (!isLanguageModelLike(languageModel)) {
    throw new ModelError(
      "unknown_provider",
      `${packageName}'s ${exportName}(${JSON.stringify(modelId)}) did not return an AI SDK language model`,
    );
  }
  return fromLanguageModel(languageModel, { id });
}

/** True when `error` says `packageName` itself could not be found (not one of its dependencies). */
function isModuleNotFound(error: unknown, packageName: string): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  const notFound =
    code === "ERR_MODULE_NOT_FOUND" ||
    code === "MODULE_NOT_FOUND" ||
    /cannot find|could not resolve|failed to (load|resolve)/i.test(error.message);
  return notFound && error.message.includes(packageName);
}
