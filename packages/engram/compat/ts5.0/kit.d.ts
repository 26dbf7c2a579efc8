// `engram/kit` for TypeScript < 5.4: the same declarations, with `NoInfer` (see no-infer.d.ts).
import "./no-infer.js";
export * from "../../dist/kit.js";
