/**
 * `engram/mcp`: tools from Model Context Protocol servers (stdio and Streamable HTTP). A subpath of
 * its own so that bundles which never use MCP never see the SDK.
 * @module
 */
export {
  type McpAttachment,
  type McpCallResult,
  type McpHttpServer,
  type McpServerConfig,
  type McpStdioServer,
  type McpTool,
  type McpToolResult,
  McpToolset,
  type McpToolsetOptions,
  namespacedToolName,
  toToolResult,
} from "./toolset.js";
