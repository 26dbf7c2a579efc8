export { AgentTracing, type SpanAttributes, type SpanLike, type TracerLike, type TracingOptions } from "./tracing.js";
