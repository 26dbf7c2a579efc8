/**
 * Decorating a backend: a wrapper that replaces some operations and forwards every other
 * property to the backend itself (with the backend as `this`, so class backends with private
 * fields keep working).
 * @module
 */
import type { Backend } from "./protocol.js";

/** `backend` with `overrides` in place of its own methods; everything else is the backend's. */
export function wrapBackend<B extends Backend>(backend: B, overrides: Partial<Backend>): B {
  // A forwarded method is bound once per function, not on every property read (a tool call
  // reads one per call).
  const bound = new WeakMap<object, unknown>();
  return new Proxy(backend, {
    get(target, key) {
      if (Object.hasOwn(overrides, key)) return overrides[key as keyof Backend];
      const value = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      let fn = bound.get(value);
      if (fn === undefined) {
        fn = value.bind(target);
        bound.set(value, fn);
      }
      return fn;
    },
  });
}
