/**
 * Tools from Model Context Protocol servers, over stdio or Streamable HTTP, on the official
 * `@modelcontextprotocol/sdk` client (an optional peer dependency, loaded only when used).
 *
 * Each server's tools are listed once and cached until the server sends
 * `notifications/tools/list_changed`; they reach the model as `<server>__<tool>` with the
 * server's JSON Schema passed as is, and their results (text, images, resources, errors) become
 * tool results.
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

/** One connected server and its cached tool list. */
class Connection {
  #tools: Promise<McpTool[]> | undefined;
  constructor(
    readonly name: string,
    readonly client: Client,
    readonly callTimeoutMs: number,
  ) {}

  /** Forgets the cached list (the server said it changed). */
  invalidate(): void {
    this.#tools = undefined;
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
    const listed: ListedTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.client.listTools(cursor === undefined ? {} : { cursor });
      listed.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return listed.map((t) => this.#tool(t));
  }

  #tool(t: ListedTool): McpTool {
    const call = async (input: Record<string, unknown>, context: ToolContext): Promise<McpToolResult> => {
      try {
        const result = await this.client.callTool({ name: t.name, arguments: input }, undefined, {
          timeout: this.callTimeoutMs,
          ...(context.signal && { signal: context.signal }),
        });
        return toToolResult(result);
      } catch (e) {
        return {
          content: `Error: ${t.name} on MCP server '${this.name}' failed: ${e instanceof Error ? e.message : String(e)}`,
          isError: true,
        };
      }
    };
    return {
      name: namespacedToolName(this.name, t.name),
      description: t.description ?? t.title ?? `Tool ${t.name} of the MCP server ${this.name}`,
      // The server validates its own arguments; the model is given the server's schema as is.
      schema: z.record(z.string(), z.unknown()),
      jsonSchema: t.inputSchema as Record<string, unknown>,
      mcpName: t.name,
      server: this.name,
      run: call,
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
    const { Client } = await loadSdk();
    const settled = await Promise.allSettled(
      Object.entries(servers).map(async ([name, config]) => {
        const transport = await transportFor(name, config);
        let connection: Connection | undefined;
        const client = new Client(
          { name: "engram", version: "0.1.0" },
          { listChanged: { tools: { autoRefresh: false, debounceMs: 0, onChanged: () => connection?.invalidate() } } },
        );
        try {
          await client.connect(transport);
        } catch (e) {
          await client.close().catch(() => undefined);
          throw new EngramError("unsupported", `could not connect to MCP server '${name}': ${e instanceof Error ? e.message : String(e)}`, {
            cause: e,
          });
        }
        connection = new Connection(name, client, callTimeoutMs);
        return connection;
      }),
    );
    const connections = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
    if (failed) {
      await Promise.all(connections.map((c) => c.client.close().catch(() => undefined)));
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
    await Promise.all(this.#connections.map((c) => c.client.close().catch(() => undefined)));
  }
}
