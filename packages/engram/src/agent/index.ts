export { createDeepAgent, type DeepAgent } from "./create.js";
export {
  type AgentModelSettings,
  BUILT_IN_TOOL_NAMES,
  DEFAULT_OPTIONS,
  type BackendContext,
  type DeepAgentOptions,
  type InterruptConfig,
  type LongTermMemoryAgentOptions,
  type SubagentDefinition,
  type ThreadRecallOptions,
} from "./options.js";
export {
  CHECKPOINT_VERSION,
  type Checkpoint,
  type Checkpointer,
  type EncodedCheckpoint,
  type FilesRef,
  type GetCheckpointOptions,
  InMemoryCheckpointer,
  type InMemoryCheckpointerOptions,
  type ListThreadsOptions,
  type ThreadInfo,
  checkThreadId,
  checkThreadLimit,
  checkpointFiles,
  decodeCheckpoint,
  encodeCheckpoint,
  assembleCheckpoint,
  filesConflict,
  revisionConflict,
  sameFiles,
} from "./checkpointer.js";
export {
  ProcessClaims,
  type RunStep,
  type StepOperations,
  type ThreadClaim,
  checkRunStep,
  hasStepOperations,
  stepConflict,
  threadBusy,
} from "./run-steps.js";
export { OPEN_TOOLS, interruptedCallNotice, runStatus } from "./step-log.js";
export type { AgentState, HookContext, Middleware, ModelResponse } from "./middleware.js";
export {
  type AgentEvent,
  type AgentInput,
  type AgentOutput,
  type Decision,
  type Interrupt,
  type InterruptedCall,
  type StopReason,
  type SubagentIdentity,
  type ResumeInput,
  type RunContext,
  type RunOptions,
  resume,
} from "./types.js";
export { DEFAULT_SYSTEM_PROMPT } from "./prompt.js";
export { type SignalProcess, closeOnSignals } from "./shutdown.js";
