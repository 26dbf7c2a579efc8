/**
 * Middleware types, re-exported for the agent's public API (they live in `middleware/types.ts`
 * so middleware never imports the agent).
 * @module
 */
export { type AgentState, type DecisionType, type HookContext, type Middleware, type ModelResponse, chain } from "../middleware/types.js";
