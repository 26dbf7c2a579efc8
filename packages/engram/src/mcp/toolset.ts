/**
 * Tools from Model Context Protocol servers, over stdio or Streamable HTTP, on the official
 * `@modelcontextprotocol/sdk` client (an optional peer dependency, loaded only when used).
 *
 * Each server's tools are listed once and cached until the server sends
 * `notifications/tools/list_changed`; they reach the model as `<server>__<tool>` with the
 * server's JSON Schema passed as is, and their results (text, images, resources, errors) become
 * tool results. A lost connection is made again on the next call; a stdio result too large for
 * the connection (which ends it) is answered as such to the model.
 * @module
 */
import * as z from "zod/mini";
import { ConfigError, EngramError } from "../errors.js";
import type { Tool, ToolContext, ToolResult } from "../tools/types.js";

/** A server started as a child process, speaking MCP over its stdin/stdout. */
export interface McpStdioServer {
  command: string;
  /** Default: none. */
  args?: string[];
  /** The child's environment. Default: the SDK's safe default (PATH, HOME, … — not the parent's secrets). */
  env?: Record<string, string>;
  /** Default: the current directory. */
  cwd?: string;
}

/** A server reached over Streamable HTTP. */
export interface McpHttpServer {
  url: string | URL;
  /** Sent with every request (e.g. `Authorization`). Default: none. */
  headers?: Record<string, string>;
}

/** How to reach one MCP server. */
export type McpServerConfig = McpStdioServer | McpHttpServer;

/** Options of {@link McpToolset.connect}. */
export interface McpToolsetOptions {
  /** How long one tool call may take, in milliseconds. Default: 60,000. */
  callTimeoutMs?: number;
}

/** An image (or other binary) part of a tool result, for models that accept attachments. */
export interface McpAttachment {
  type: "image" | "audio";
  mimeType: string;
  /** Base64. */
  data: string;
}

/** A tool backed by an MCP server. `jsonSchema` is the server's input schema, sent to the model as is. */
export interface McpTool extends Tool<Record<string, unknown>> {
  jsonSchema: Record<string, unknown>;
  /** The server's own name for the tool (before namespacing). */
  mcpName: string;
  server: string;
  run(input: Record<string, unknown>, context: ToolContext): Promise<McpToolResult>;
}

/** What {@link McpTool}s return: a tool result plus any binary parts. */
export interface McpToolResult extends ToolResult {
  attachments?: McpAttachment[];
}

const SERVER_NAME = /^[A-Za-z0-9_-]{1,32}$/;
const MAX_TOOL_NAME = 64;
const DEFAULT_CALL_TIMEOUT_MS = 60_000;
/** The largest message a stdio server may send (the SDK's default): a bigger one ends the
 * connection. */
const STDIO_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
/** Failed connection attempts in a row after which a lost server is given up. */
const MAX_RECONNECTS = 3;

type Sdk = {
  Client: typeof import("@modelcontextprotocol/sdk/client/index.js").Client;
};
type Client = InstanceType<Sdk["Client"]>;
type ListedTool = Awaited<ReturnType<Client["listTools"]>>["tools"][number];

/** Held in a variable so that bundlers leave the optional SDK out of bundles that never use MCP. */
const SDK = "@modelcontextprotocol/sdk";
const sdkModule = <T>(path: string): Promise<T> => import(`${SDK}/${path}`) as Promise<T>;

async function loadSdk(): Promise<Sdk> {
  try {
    return { Client: (await sdkModule<typeof import("@modelcontextprotocol/sdk/client/index.js")>("client/index.js")).Client };
  } catch (cause) {
    throw new EngramError(
      "unsupported",
      "mcpServers needs the optional package @modelcontextprotocol/sdk: npm install @modelcontextprotocol/sdk",
      {
        cause,
      },
    );
  }
}

async function transportFor(name: string, config: McpServerConfig) {
  if ("command" in config && typeof config.command === "string") {
    const { StdioClientTransport } = await sdkModule<typeof import("@modelcontextprotocol/sdk/client/stdio.js")>("client/stdio.js");
    return new StdioClientTransport({
      command: config.command,
      ...(config.args && { args: config.args }),
      ...(config.env && { env: config.env }),
      ...(config.cwd && { cwd: config.cwd }),
      stderr: "pipe",
      maxBufferSize: STDIO_MAX_MESSAGE_BYTES,
    });
  }
  if ("url" in config && (typeof config.url === "string" || config.url instanceof URL)) {
    const { StreamableHTTPClientTransport } =
      await sdkModule<typeof import("@modelcontextprotocol/sdk/client/streamableHttp.js")>("client/streamableHttp.js");
    return new StreamableHTTPClientTransport(
      new URL(config.url),
      config.headers ? { requestInit: { headers: config.headers } } : undefined,
    );
  }
  throw new ConfigError(`mcpServers.${name}`, "needs either `command` (stdio) or `url` (Streamable HTTP)");
}

/** `<server>__<tool>`, limited to the characters and length every provider accepts. */
export function namespacedToolName(server: string, tool: string): string {
  const name = `${server}__${tool.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  if (name.length <= MAX_TOOL_NAME) return name;
  // Keep it unique when cut: a short hash of the full name replaces the tail.
  let h = 0;
  for (const ch of name) h = (Math.imul(h, 31) + (ch.codePointAt(0) ?? 0)) >>> 0;
  const tag = h.toString(36);
  return `${name.slice(0, MAX_TOOL_NAME - tag.length - 1)}_${tag}`;
}

/** An MCP `CallToolResult` as far as {@link toToolResult} reads it; the SDK's result type fits.
 * (Declared here so that the published declarations need no optional package.) */
export interface McpCallResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
  /** The result of a server on protocol 2024-10-07 or older. */
  toolResult?: unknown;
}

/** Maps an MCP `CallToolResult` to what the model receives. */
export function toToolResult(result: McpCallResult): McpToolResult {
  const texts: string[] = [];
  const attachments: McpAttachment[] = [];
  const content = Array.isArray(result.content) ? result.content : [];
  for (const part of content as { type: string; [k: string]: unknown }[]) {
    switch (part.type) {
      case "text":
        texts.push(String(part.text ?? ""));
        break;
      case "image":
      case "audio": {
        const data = String(part.data ?? "");
        const mimeType = String(part.mimeType ?? "application/octet-stream");
        attachments.push({ type: part.type, mimeType, data });
        texts.push(`[${part.type} attached: ${mimeType}, ${Math.floor((data.length * 3) / 4)} bytes]`);
        break;
      }
      case "resource": {
        const r = (part.resource ?? {}) as { uri?: string; text?: string; mimeType?: string };
        texts.push(typeof r.text === "string" ? r.text : `[resource ${r.uri ?? ""} (${r.mimeType ?? "binary"})]`);
        break;
      }
      case "resource_link":
        texts.push(`[resource link: ${String(part.uri ?? "")}]`);
        break;
      default:
        texts.push(`[unsupported content: ${part.type}]`);
    }
  }
  if (texts.length === 0 && result.structuredContent !== undefined) texts.push(JSON.stringify(result.structuredContent));
  if (texts.length === 0 && "toolResult" in result) texts.push(JSON.stringify(result.toolResult));
  const isError = result.isError === true;
  return {
    content: texts.join("\n") || (isError ? "Error: the tool failed without a message" : "(no output)"),
    ...(isError && { isError }),
    ...(attachments.length > 0 && { attachments }),
  };
}

/**
 * Makes a stdio transport's read buffer throw a typed `too_large` error for a message over its
 * limit — the SDK throws a plain Error, reports it through `onerror` and closes the connection —
 * so that the call can be answered "too large". A transport without that buffer (HTTP, or an
 * SDK that keeps it elsewhere) is left as it is.
 */
function typeOversizedMessages(transport: object): void {
  const buffer = (transport as { _readBuffer?: { append?: unknown } })._readBuffer;
  if (typeof buffer?.append !== "function") return;
  const append = (buffer.append as (chunk: Uint8Array) => void).bind(buffer);
  buffer.append = (chunk: Uint8Array) => {
    try {
      append(chunk);
    } catch (cause) {
      throw new EngramError("too_large", `a message of the server is over ${STDIO_MAX_MESSAGE_BYTES} bytes`, { cause });
    }
  };
}

/** One connection to a server; `oversized` once the server sent a message over the limit. */
interface Session {
  client: Client;
  oversized: boolean;
}

/**
 * One server: its connection and its cached tool list. A lost connection (the server stopped,
 * or sent a message over the stdio limit, which makes the SDK close it) is made again on the
 * next use, at most {@link MAX_RECONNECTS} failed attempts in a row.
 */
class Connection {
  #tools: Promise<McpTool[]> | undefined;
  #session: Session | undefined;
  #connecting: Promise<Session> | undefined;
  #failedAttempts = 0;
  #closed = false;

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    readonly sdk: Sdk,
    readonly callTimeoutMs: number,
  ) {}

  /** Forgets the cached list (the server said it changed, or it was connected again). */
  invalidate(): void {
    this.#tools = undefined;
  }

  /** The live connection, made (again) when there is none. */
  session(): Promise<Session> {
    if (this.#session) return Promise.resolve(this.#session);
    if (this.#closed) return Promise.reject(new EngramError("unsupported", `MCP server '${this.name}' is closed`));
    if (this.#failedAttempts >= MAX_RECONNECTS) {
      return Promise.reject(
        new EngramError("unsupported", `MCP server '${this.name}' is gone: ${MAX_RECONNECTS} attempts to connect to it again failed`),
      );
    }
    this.#connecting ??= this.#connect().then(
      (session) => {
        this.#connecting = undefined;
        this.#failedAttempts = 0;
        this.#session = session;
        this.invalidate();
        return session;
      },
      (e: unknown) => {
        this.#connecting = undefined;
        this.#failedAttempts++;
        throw e;
      },
    );
    return this.#connecting;
  }

  async #connect(): Promise<Session> {
    const transport = await transportFor(this.name, this.config);
    typeOversizedMessages(transport);
    const client = new this.sdk.Client(
      { name: "engram", version: "0.1.0" },
      { listChanged: { tools: { autoRefresh: false, debounceMs: 0, onChanged: () => this.invalidate() } } },
    );
    const session: Session = { client, oversized: false };
    // Kept by the client when it connects (it calls ours first, then its own).
    transport.onerror = (e: unknown) => {
      if (EngramError.hasCode(e, "too_large")) session.oversized = true;
    };
    client.onclose = () => {
      if (this.#session === session) this.#session = undefined;
    };
    try {
      await client.connect(transport);
    } catch (e) {
      await client.close().catch(() => undefined);
      throw new EngramError(
        "unsupported",
        `could not connect to MCP server '${this.name}': ${e instanceof Error ? e.message : String(e)}`,
        {
          cause: e,
        },
      );
    }
    return session;
  }

  /** Closes the connection for good. */
  async close(): Promise<void> {
    this.#closed = true;
    const session = this.#session ?? (await this.#connecting?.catch(() => undefined));
    this.#session = undefined;
    await session?.client.close().catch(() => undefined);
  }

  tools(): Promise<McpTool[]> {
    this.#tools ??= this.#list().catch((e: unknown) => {
      this.#tools = undefined;
      throw new EngramError(
        "unsupported",
        `MCP server '${this.name}' could not list its tools: ${e instanceof Error ? e.message : String(e)}`,
        {
          cause: e,
        },
      );
    });
    return this.#tools;
  }

  async #list(): Promise<McpTool[]> {
    const { client } = await this.session();
    const listed: ListedTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      listed.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return listed.map((t) => this.#tool(t));
  }

  /** Calls a tool; every failure is an error result for the model. */
  async #call(tool: string, input: Record<string, unknown>, context: ToolContext): Promise<McpToolResult> {
    const failed = (why: string): McpToolResult => ({
      content: `Error: ${tool} on MCP server '${this.name}' failed: ${why}`,
      isError: true,
    });
    let session: Session;
    try {
      session = await this.session();
    } catch (e) {
      return failed(e instanceof Error ? e.message : String(e));
    }
    try {
      const result = await session.client.callTool({ name: tool, arguments: input }, undefined, {
        timeout: this.callTimeoutMs,
        ...(context.signal && { signal: context.signal }),
      });
      return toToolResult(result);
    } catch (e) {
      if (session.oversized) {
        return failed(
          `its result was too large: over ${STDIO_MAX_MESSAGE_BYTES} bytes, more than the connection takes. Ask for less (a narrower query, a smaller range); the server is connected again for the next call.`,
        );
      }
      return failed(e instanceof Error ? e.message : String(e));
    }
  }

  #tool(t: ListedTool): McpTool {
    return {
      name: namespacedToolName(this.name, t.name),
      description: t.description ?? t.title ?? `Tool ${t.name} of the MCP server ${this.name}`,
      // The server validates its own arguments; the model is given the server's schema as is.
      schema: z.record(z.string(), z.unknown()),
      jsonSchema: t.inputSchema as Record<string, unknown>,
      mcpName: t.name,
      server: this.name,
      run: (input, context) => this.#call(t.name, input, context),
    };
  }
}

/**
 * Connections to several MCP servers and their tools.
 *
 * ```ts
 * const mcp = await McpToolset.connect({ files: { command: "npx", args: ["my-mcp-server"] } });
 * const agent = createDeepAgent(model, { tools: await mcp.tools() });
 * // …
 * await mcp.close();
 * ```
 */
export class McpToolset {
  readonly #connections: Connection[];
  private constructor(connections: Connection[]) {
    this.#connections = connections;
  }

  /** Connects to every server (in parallel); if one fails, the others are closed and the error thrown. */
  static async connect(servers: Record<string, McpServerConfig>, options: McpToolsetOptions = {}): Promise<McpToolset> {
    if (servers === null || typeof servers !== "object") throw new ConfigError("mcpServers", "must be an object of server name → config");
    const callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    if (!Number.isFinite(callTimeoutMs) || callTimeoutMs <= 0) throw new ConfigError("mcp.callTimeoutMs", "must be a positive number");
    for (const name of Object.keys(servers)) {
      if (!SERVER_NAME.test(name)) throw new ConfigError(`mcpServers.${name}`, "a server name is 1–32 characters of [A-Za-z0-9_-]");
    }
    const sdk = await loadSdk();
    const settled = await Promise.allSettled(
      Object.entries(servers).map(async ([name, config]) => {
        const connection = new Connection(name, config, sdk, callTimeoutMs);
        await connection.session();
        return connection;
      }),
    );
    const connections = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
    if (failed) {
      await Promise.all(connections.map((c) => c.close()));
      throw failed.reason;
    }
    return new McpToolset(connections);
  }

  /** Every server's tools, namespaced; listed once per server and cached until it reports a change. */
  async tools(): Promise<McpTool[]> {
    return (await Promise.all(this.#connections.map((c) => c.tools()))).flat();
  }

  /** Closes every connection (and stops stdio servers). */
  async close(): Promise<void> {
    await Promise.all(this.#connections.map((c) => c.close()));
  }
}
