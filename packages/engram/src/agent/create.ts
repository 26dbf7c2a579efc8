/**
 * `createDeepAgent(model, options)`: the agent loop over the 7-slot middleware stack.
 * @module
 */
import { z } from "zod";
import type { Backend } from "../backends/protocol.js";
import { StateBackend } from "../backends/state.js";
import { loadCore } from "../core/loader.js";
import type { Core } from "../core/types.js";
import { filesystemMiddleware } from "../middleware/filesystem.js";
import { LongTermMemory } from "../memory/longterm/longterm.js";
import { StoreMemoryStorage } from "../memory/longterm/store-storage.js";
import { type MemoryCacheEntry, memoryMiddleware } from "../middleware/memory.js";
import { skillsMiddleware } from "../middleware/skills.js";
import { applyDecisions, hitlMiddleware } from "../middleware/hitl.js";
import { patchToolCallsMiddleware } from "../middleware/patch-tool-calls.js";
import { subagentsMiddleware } from "../middleware/subagents.js";
import { summarizationMiddleware } from "../middleware/summarization.js";
import type { LanguageModelLike } from "../models/ai-sdk.js";
import { resolveModel } from "../models/resolve.js";
import type { ChatModel, Message, ModelRequest, ToolCall, ToolSpec, Usage } from "../models/types.js";
import { invokeTool, type Tool, type ToolResult } from "../tools/types.js";
import { Channel } from "./channel.js";
import { type Checkpoint, InMemoryCheckpointer } from "./checkpointer.js";
import { type AgentState, type HookContext, type Middleware, type ModelResponse, chain } from "./middleware.js";
import { type DeepAgentOptions, type ResolvedOptions, resolveOptions } from "./options.js";
import { DEFAULT_SYSTEM_PROMPT } from "./prompt.js";
import { ResumeError } from "../errors.js";
import type { AgentEvent, AgentInput, AgentOutput, Interrupt, RunOptions } from "./types.js";

/** An agent: run it with `invoke` or `stream`; `close` when done. */
export interface DeepAgent {
  invoke(input: AgentInput, options?: RunOptions): Promise<AgentOutput>;
  stream(input: AgentInput, options?: RunOptions): AsyncGenerator<AgentEvent, void>;
  /** Finishes pending background work (long-term memory). */
  close(): Promise<void>;
  /** The agent's long-term memory, when enabled: list, add, edit and delete facts, or clear a
   * user's memory. */
  readonly longTermMemory?: LongTermMemory;
}

/** A backend that can be saved with the thread (the default per-thread StateBackend). */
interface Snapshotting {
  snapshot(): Promise<Uint8Array>;
  loadSnapshot(snapshot: Uint8Array): Promise<void>;
}

function snapshotting(b: Backend): Snapshotting | undefined {
  const s = b as Partial<Snapshotting>;
  return typeof s.snapshot === "function" && typeof s.loadSnapshot === "function" ? (s as Snapshotting) : undefined;
}

/** JSON Schemas by zod schema: tools are rebuilt per run, their schemas are not. */
const jsonSchemas = new WeakMap<object, Record<string, unknown>>();

function toolSpec(tool: Tool<never>): ToolSpec {
  let parameters = jsonSchemas.get(tool.schema);
  if (!parameters) {
    parameters = z.toJSONSchema(tool.schema as z.ZodType, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
    jsonSchemas.set(tool.schema, parameters);
  }
  return { name: tool.name, description: tool.description, parameters };
}

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : Object.assign(new Error("the run was aborted"), { name: "AbortError" });
}

/**
 * Creates a deep agent. Throws a {@link ConfigError} for an invalid option.
 * @param model - a {@link ChatModel}, a Vercel AI SDK language model, or a `"provider:model"`
 *   string such as `"openai:gpt-4.1"` or `"ollama:llama3.1"` (see {@link resolveModel})
 */
export function createDeepAgent(model: ChatModel | LanguageModelLike | string, options: DeepAgentOptions = {}): DeepAgent {
  const resolved = resolveOptions(options);
  return buildAgent(resolveModel(model), resolved, 0);
}

function buildAgent(model: ChatModel, o: ResolvedOptions, depth: number): DeepAgent {
  const checkpointer = o.checkpointer ?? new InMemoryCheckpointer();
  const corePromise: Promise<Core> = Promise.resolve(o.core ?? loadCore());
  const ltmOptions = o.longTermMemory === true ? {} : o.longTermMemory || undefined;
  const longTerm = ltmOptions
    ? new LongTermMemory({
        ...ltmOptions,
        model: ltmOptions.model ?? model,
        core: ltmOptions.core ?? corePromise,
        ...(!ltmOptions.storage && o.store && { storage: new StoreMemoryStorage({ store: o.store }) }),
      })
    : undefined;
  const identity = (ctx: { threadId: string; userId?: string }) => ({
    threadId: ctx.threadId,
    userId: ctx.userId ?? ltmOptions?.defaultUserId ?? "default",
    ...(ltmOptions?.agentName !== undefined && { agentName: ltmOptions.agentName }),
  });
  const backendFor = (threadId: string, userId: string | undefined): Backend => {
    if (typeof o.backend === "function") return o.backend({ threadId, ...(userId !== undefined && { userId }) });
    return o.backend ?? new StateBackend({ core: corePromise });
  };

  /** Memory text by thread, so an unchanged memory file is not read again on the next run. */
  const memoryCaches = new Map<string, Map<string, MemoryCacheEntry>>();
  const memoryCache = (threadId: string) => {
    let cache = memoryCaches.get(threadId);
    if (!cache) {
      if (memoryCaches.size >= 256) memoryCaches.delete(memoryCaches.keys().next().value as string);
      cache = new Map();
      memoryCaches.set(threadId, cache);
    }
    return cache;
  };

  /** The stack in DESIGN §2 order. */
  function stack(backend: Backend, core: Core, threadId: string): Middleware[] {
    const m: Middleware[] = [];
    if (o.enableMemory) {
      m.push(
        memoryMiddleware({
          backend,
          sources: o.memorySources,
          cache: memoryCache(threadId),
          ...(longTerm && {
            extra: (ctx, request) => {
              const who = identity(ctx);
              return longTerm.inject(who.userId, who.agentName, request);
            },
            afterRun: (ctx) => {
              longTerm.capture(ctx.state.messages, identity(ctx));
            },
          }),
        }),
      );
    }
    if (o.enableSkills) m.push(skillsMiddleware({ backend, sources: o.skillsSources }));
    if (o.enableFilesystem) m.push(filesystemMiddleware(backend, core, o.evictionThreshold));
    if (o.enableSubagents) {
      m.push(
        subagentsMiddleware(o.subagents, o.maxSubagentDepth, (definition, task, parent) => {
          const child = buildAgent(
            definition?.model ?? model,
            {
              ...o,
              // The child shares the backend but not the parent's thread, history or reviewers.
              backend,
              checkpointer: new InMemoryCheckpointer(),
              // Subagent conversations are internal: they neither see nor feed long-term memory.
              longTermMemory: false,
              systemPrompt: definition?.systemPrompt ?? o.systemPrompt,
              tools: definition?.tools ?? o.tools,
              interruptOn: {},
            },
            parent.depth + 1,
          );
          return child.invoke(
            { messages: [{ role: "user", content: task }] },
            {
              threadId: `${parent.threadId}:task`,
              ...(parent.userId !== undefined && { userId: parent.userId }),
              ...(parent.signal && { signal: parent.signal }),
            },
          );
        }),
      );
    }
    m.push(
      summarizationMiddleware({
        model,
        backend,
        maxInputTokens: o.maxInputTokens,
        threshold: o.summarizationThreshold,
        keepMessages: o.summarizationKeepMessages,
        beforeSummarize: async (dropped, ctx) => {
          // What is about to be summarised away goes to long-term memory first, without delay.
          longTerm?.capture(dropped, identity(ctx), { immediate: true });
          await o.beforeSummarize?.(dropped, ctx);
        },
      }),
    );
    m.push(patchToolCallsMiddleware());
    m.push(...o.middleware);
    if (Object.keys(o.interruptOn).length > 0) m.push(hitlMiddleware(o.interruptOn));
    return m;
  }

  async function* run(input: AgentInput, opts: RunOptions = {}): AsyncGenerator<AgentEvent, void> {
    if (
      !input ||
      typeof input !== "object" ||
      !("resume" in input ? typeof input.resume === "object" && input.resume !== null : Array.isArray(input.messages))
    ) {
      throw new TypeError("input must be { messages: Message[] } or resume(decisions)");
    }
    const threadId = opts.threadId ?? `thread-${crypto.randomUUID()}`;
    const { signal } = opts;
    const core = await corePromise;
    const saved = await checkpointer.get(threadId);
    const backend = backendFor(threadId, opts.userId);
    const snap = snapshotting(backend);
    if (snap && saved?.files && o.backend === undefined) await snap.loadSnapshot(saved.files);
    const state: AgentState = { messages: saved?.messages ?? [], data: saved?.data ?? {} };
    const events = new Channel<AgentEvent>();
    let pending: Interrupt | undefined;
    const usage: Usage = {};
    const ctx: HookContext = {
      threadId,
      ...(opts.userId !== undefined && { userId: opts.userId }),
      ...(signal && { signal }),
      depth,
      state,
      warn: (message) => events.push({ type: "warning", message }),
      interrupt: (calls) => {
        pending = { toolCalls: calls.map(({ call, allow }) => ({ id: call.id, name: call.name, args: call.args, allow })) };
      },
    };
    const middleware = stack(backend, core, threadId);
    const tools = new Map<string, Tool<never>>();
    for (const t of [...middleware.flatMap((m) => m.tools ?? []), ...o.tools]) tools.set(t.name, t);
    const specs = [...tools.values()].map(toolSpec);
    const system = o.systemPrompt ?? DEFAULT_SYSTEM_PROMPT;

    const save = async (interrupt?: Interrupt) => {
      const cp: Checkpoint = { messages: state.messages, data: state.data, savedAt: Date.now() };
      if (snap && o.backend === undefined) cp.files = await snap.snapshot();
      if (interrupt) cp.interrupt = interrupt;
      await checkpointer.put(threadId, cp);
    };

    const callModel = chain<ModelRequest, ModelResponse>(
      middleware,
      (m) => m.wrapModelCall,
      async (request) => {
        let message: Message | undefined;
        let turnUsage: Usage | undefined;
        for await (const ev of model.stream(request)) {
          if (ev.type === "text_delta") events.push({ type: "model_delta", text: ev.text });
          else if (ev.type === "finish") {
            message = ev.message;
            turnUsage = ev.usage;
          }
        }
        if (!message) throw new Error(`model ${model.id} finished without a message`);
        return { message, ...(turnUsage && { usage: turnUsage }) };
      },
      ctx,
    );

    const runTool = chain<ToolCall, ToolResult>(
      middleware,
      (m) => m.wrapToolCall,
      async (call) => {
        const tool = tools.get(call.name);
        if (!tool) return { content: `Error: unknown tool '${call.name}'. Available: ${[...tools.keys()].join(", ")}`, isError: true };
        return invokeTool(tool, call.args, { toolCallId: call.id, ...(signal && { signal }), run: ctx });
      },
      ctx,
    );

    /** Runs calls concurrently; returns their tool messages in the order of the calls. */
    const runTools = async (calls: ToolCall[]): Promise<Message[]> => {
      for (const call of calls) events.push({ type: "tool_start", call });
      return Promise.all(
        calls.map(async (call): Promise<Message> => {
          let r: ToolResult;
          try {
            r = await runTool(call);
          } catch (e) {
            r = { content: `Error: ${call.name} failed: ${e instanceof Error ? e.message : String(e)}`, isError: true };
          }
          events.push({ type: "tool_end", call, result: r.content, isError: r.isError ?? false });
          return { role: "tool", toolCallId: call.id, content: r.content };
        }),
      );
    };

    const loop = async (): Promise<AgentOutput> => {
      if ("resume" in input) {
        const last = state.messages.at(-1);
        if (!saved?.interrupt || !last || last.role !== "assistant")
          throw new ResumeError(`thread '${threadId}' has no interrupted run to resume`);
        const resolution = applyDecisions(last, input.resume, o.interruptOn);
        if ("error" in resolution) throw new ResumeError(`cannot resume: ${resolution.error}`);
        state.messages[state.messages.length - 1] = resolution.message;
        // Results of approved calls and rejections answer the calls in their original order.
        const answers = new Map([...(await runTools(resolution.run)), ...resolution.rejected].map((m) => [m.toolCallId, m]));
        for (const call of resolution.message.toolCalls ?? []) {
          const answer = answers.get(call.id);
          if (answer) state.messages.push(answer);
        }
      } else {
        for (const m of input.messages) state.messages.push({ ...m });
        for (const m of middleware) await m.beforeAgent?.(ctx);
      }
      for (let turn = 0; turn < o.maxTurns; turn++) {
        if (signal?.aborted) throw abortError(signal);
        let request: ModelRequest = { system, messages: [...state.messages], tools: specs, ...(signal && { signal }) };
        for (const m of middleware) request = (await m.beforeModel?.(request, ctx)) ?? request;
        let response = await callModel(request);
        for (const m of middleware) response = (await m.afterModel?.(response, ctx)) ?? response;
        if (response.usage) {
          usage.inputTokens = (usage.inputTokens ?? 0) + (response.usage.inputTokens ?? 0);
          usage.outputTokens = (usage.outputTokens ?? 0) + (response.usage.outputTokens ?? 0);
        }
        state.messages.push(response.message);
        if (pending) {
          await save(pending);
          events.push({ type: "interrupt", interrupt: pending });
          return { messages: state.messages, interrupt: pending, usage };
        }
        const calls = response.message.toolCalls ?? [];
        if (calls.length === 0) {
          for (const m of middleware) await m.afterAgent?.(ctx);
          await save();
          return { messages: state.messages, usage };
        }
        if (signal?.aborted) throw abortError(signal);
        state.messages.push(...(await runTools(calls)));
      }
      events.push({ type: "warning", message: `stopped after maxTurns (${o.maxTurns}) model calls` });
      for (const m of middleware) await m.afterAgent?.(ctx);
      await save();
      return { messages: state.messages, usage };
    };

    const done = loop().catch(async (e: unknown) => {
      // A refused resume changed nothing: the thread keeps waiting for valid decisions. Otherwise
      // keep what completed; dangling tool calls are answered by the patch middleware next time.
      if (!(e instanceof ResumeError)) await save().catch(() => undefined);
      throw e;
    });
    yield* events.drainUntil(done);
    yield { type: "final", output: await done };
  }

  return {
    ...(longTerm && { longTermMemory: longTerm }),
    stream: run,
    async invoke(input, opts) {
      let output: AgentOutput | undefined;
      for await (const ev of run(input, opts)) if (ev.type === "final") output = ev.output;
      return output as AgentOutput;
    },
    async close() {
      await longTerm?.close();
    },
  };
}
