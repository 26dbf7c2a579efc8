/**
 * OpenTelemetry spans for agent runs, following the GenAI semantic conventions: one
 * `invoke_agent` span per run (subagents nested under the tool call that started them), a `chat`
 * span per model call, an `execute_tool` span per tool call, and a span per backend operation.
 *
 * `@opentelemetry/api` is an optional peer dependency, imported only when tracing is enabled;
 * spans go to whatever tracer provider the application registered (none: no-op).
 * @module
 */
import type { Backend } from "../backends/protocol.js";
import { wrapBackend } from "../backends/wrap.js";
import { EngramError } from "../errors.js";
import type { Middleware } from "../middleware/types.js";
import type { ModelRequest } from "../models/types.js";

/** The part of an OpenTelemetry `Span` Engram uses. */
export interface SpanLike {
  setAttribute(key: string, value: string | number | boolean | string[]): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: Error | string): unknown;
  end(): void;
}

/** The part of an OpenTelemetry `Tracer` Engram uses; any `@opentelemetry/api` tracer fits. */
export interface TracerLike {
  startSpan(name: string, options?: { kind?: number; attributes?: Record<string, string | number | boolean> }, context?: unknown): SpanLike;
}

/** The `tracing` option: `true` for the global tracer provider's `"engram"` tracer, or your own. */
export interface TracingOptions {
  /** Default: `trace.getTracer("engram")` from `@opentelemetry/api`. */
  tracer?: TracerLike;
  /** Record backend operations (ls, read, write, …) as spans. Default: `true`. */
  backendSpans?: boolean;
}

type Api = typeof import("@opentelemetry/api");
/** Span attributes as Engram sets them. */
export type SpanAttributes = Record<string, string | number | boolean>;

const SPAN_KIND_INTERNAL = 0;
const SPAN_KIND_CLIENT = 2;
const STATUS_ERROR = 2;
const BACKEND_OPS = ["ls", "read", "readBytes", "write", "append", "edit", "grep", "glob", "delete", "stat", "toolText"] as const;

/** Held in a variable so that bundlers leave the optional package out of bundles that never trace. */
const OTEL_API = "@opentelemetry/api";

async function loadApi(): Promise<Api> {
  try {
    return (await import(OTEL_API)) as Api;
  } catch (cause) {
    throw new EngramError("unsupported", "tracing needs the optional package @opentelemetry/api: npm install @opentelemetry/api", {
      cause,
    });
  }
}

/** Spans for one agent (and its subagents). Build it with {@link AgentTracing.create}. */
export class AgentTracing {
  private constructor(
    private readonly api: Api,
    readonly tracer: TracerLike,
    readonly backendSpans: boolean,
  ) {}

  /** Loads `@opentelemetry/api` and picks the tracer. */
  static async create(options: true | TracingOptions): Promise<AgentTracing> {
    const api = await loadApi();
    const o = options === true ? {} : options;
    return new AgentTracing(api, o.tracer ?? (api.trace.getTracer("engram") as unknown as TracerLike), o.backendSpans ?? true);
  }

  /** Runs `fn` inside a span that is the active context, so spans started within nest under it. */
  async span<T>(name: string, attributes: SpanAttributes, fn: (span: SpanLike) => Promise<T>, kind = SPAN_KIND_INTERNAL): Promise<T> {
    const { context, trace } = this.api;
    const span = this.tracer.startSpan(name, { kind, attributes }, context.active());
    try {
      return await context.with(trace.setSpan(context.active(), span as never), () => fn(span));
    } catch (e) {
      span.recordException(e instanceof Error ? e : String(e));
      span.setStatus({ code: STATUS_ERROR, message: e instanceof Error ? e.message : String(e) });
      throw e;
    } finally {
      span.end();
    }
  }

  /** The `invoke_agent` span of one run. */
  run<T>(agent: { name: string; threadId: string; depth: number }, fn: (span: SpanLike) => Promise<T>): Promise<T> {
    return this.span(
      `invoke_agent ${agent.name}`,
      {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent.name,
        "gen_ai.conversation.id": agent.threadId,
        "engram.agent.depth": agent.depth,
      },
      fn,
    );
  }

  /** Model and tool spans, as slot-7 style middleware (outermost, so they time the whole call). */
  middleware(modelId: string): Middleware {
    return {
      name: "tracing",
      wrapModelCall: (request: ModelRequest, next) =>
        this.span(
          `chat ${modelId}`,
          { "gen_ai.operation.name": "chat", "gen_ai.request.model": modelId, ...requestAttributes(request) },
          async (span) => {
            const response = await next(request);
            if (response.usage?.inputTokens !== undefined) span.setAttribute("gen_ai.usage.input_tokens", response.usage.inputTokens);
            if (response.usage?.outputTokens !== undefined) span.setAttribute("gen_ai.usage.output_tokens", response.usage.outputTokens);
            if (response.finishReason) span.setAttribute("gen_ai.response.finish_reasons", [response.finishReason]);
            span.setAttribute("engram.tool_calls", response.message.toolCalls?.length ?? 0);
            return response;
          },
          SPAN_KIND_CLIENT,
        ),
      wrapToolCall: (call, next) =>
        this.span(
          `execute_tool ${call.name}`,
          { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.name, "gen_ai.tool.call.id": call.id },
          async (span) => {
            const result = await next(call);
            if (result.isError) span.setStatus({ code: STATUS_ERROR, message: result.content.slice(0, 200) });
            span.setAttribute("engram.tool.result_chars", result.content.length);
            return result;
          },
        ),
    };
  }

  /** Wraps a backend so each operation is a span (when `backendSpans`). */
  backend(backend: Backend): Backend {
    if (!this.backendSpans) return backend;
    const overrides: Record<string, unknown> = {};
    for (const op of BACKEND_OPS) {
      const fn = (backend as unknown as Record<string, unknown>)[op];
      if (typeof fn !== "function") continue;
      overrides[op] = (...args: unknown[]) =>
        this.span(
          `engram.backend.${op}`,
          { "engram.backend.op": op, ...(typeof args[0] === "string" && { "engram.path": args[0] }) },
          async (span) => {
            const r = (await fn.apply(backend, args)) as { error?: { code: string } };
            if (r?.error) {
              span.setAttribute("engram.error.code", r.error.code);
              span.setStatus({ code: STATUS_ERROR, message: r.error.code });
            }
            return r;
          },
        );
    }
    return wrapBackend(backend, overrides as Partial<Backend>);
  }
}

function requestAttributes(request: ModelRequest): SpanAttributes {
  const a: SpanAttributes = { "engram.messages": request.messages.length, "engram.tools": request.tools.length };
  const settings = (request as { settings?: { temperature?: number; maxOutputTokens?: number; topP?: number } }).settings;
  if (settings?.temperature !== undefined) a["gen_ai.request.temperature"] = settings.temperature;
  if (settings?.maxOutputTokens !== undefined) a["gen_ai.request.max_tokens"] = settings.maxOutputTokens;
  if (settings?.topP !== undefined) a["gen_ai.request.top_p"] = settings.topP;
  return a;
}
