/**
 * Decorating a backend: a wrapper that replaces some operations and forwards every other
 * property to the backend itself (with the backend as `this`, so class backends with private
 * fields keep working).
 * @module
 */
import { type BackendCapabilities, CAPABILITIES } from "./capabilities.js";
import type { Backend } from "./protocol.js";

/** The methods through which a backend shows its files. */
const READING = ["ls", "stat", "read", "readBytes", "glob", "grep"] as const;

/**
 * `backend` with `overrides` in place of its own methods; everything else is the backend's.
 * The backend's capabilities (`residentTable`, `toolText`, … see capabilities.ts) answer from
 * its files directly, so they are forwarded only when `overrides` replaces no reading method (a
 * wrapper that records or rewrites writes shows the backend's files); a wrapper that replaces a
 * reading method keeps only the capabilities it gives in `overrides` itself.
 */
export function wrapBackend<B extends Backend>(backend: B, overrides: Partial<Backend & BackendCapabilities>): B {
  const readsThrough = !READING.some((key) => Object.hasOwn(overrides, key));
  const hidden = new Set<PropertyKey>(readsThrough ? [] : CAPABILITIES.filter((key) => !Object.hasOwn(overrides, key)));
  // A forwarded method is bound once per function, not on every property read (a tool call
  // reads one per call).
  const bound = new WeakMap<object, unknown>();
  const proxy = new Proxy(backend, {
    get(target, key) {
      if (Object.hasOwn(overrides, key)) return (overrides as Record<PropertyKey, unknown>)[key];
      if (hidden.has(key)) return undefined;
      const value = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      let fn = bound.get(value);
      if (fn === undefined) {
        fn = value.bind(target);
        bound.set(value, fn);
      }
      return fn;
    },
    has(target, key) {
      return Object.hasOwn(overrides, key) || (!hidden.has(key) && Reflect.has(target, key));
    },
  });
  return proxy;
}
