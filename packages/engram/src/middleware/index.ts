export { filesystemMiddleware } from "./filesystem.js";
export type { MemoryCacheEntry } from "../memory/sources/load.js";
export { MEMORY_GUIDELINES, type MemoryMiddlewareOptions, memoryMiddleware } from "./memory.js";
export { patchToolCallsMiddleware } from "./patch-tool-calls.js";
export { historyPath, summarizationMiddleware, type SummarizationOptions } from "./summarization.js";
export { GENERAL_PURPOSE, type SpawnSubagent, type SubagentRequest, subagentsMiddleware } from "./subagents.js";
export { allowedDecisions, hitlMiddleware, stricterPolicy } from "./hitl.js";
export type { DecisionType } from "./types.js";
export { type SkillsMiddlewareOptions, skillsMiddleware } from "./skills.js";
export {
  PAST_THREADS_TOOL_NAME,
  type PastThreadsOptions,
  formatPastThreads,
  pastThreadsMiddleware,
  pastThreadsTool,
} from "./past-threads.js";
