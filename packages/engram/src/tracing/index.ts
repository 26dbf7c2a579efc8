export { AgentTracing, type SpanLike, type TracerLike, type TracingOptions } from "./tracing.js";
