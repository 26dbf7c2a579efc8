export { type Tool, type ToolAttachment, type ToolContext, type ToolResult, invokeTool } from "./types.js";
export { createFilesystemTools, type FilesystemToolsOptions, FILESYSTEM_TOOL_NAMES } from "./filesystem.js";
export { DEFAULT_EVICTION_CHARS, type EvictionOptions, evictLargeResult, safeResultId } from "./eviction.js";
export { DEFAULT_MAX_OUTPUT_CHARS } from "./format.js";
export { createExecuteTool, EXECUTE_TOOL_NAME } from "./execute.js";
