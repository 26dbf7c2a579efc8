/**
 * Decorating a backend: a wrapper that replaces some operations and forwards every other
 * property to the backend itself (with the backend as `this`, so class backends with private
 * fields keep working).
 * @module
 */
import type { Backend } from "./protocol.js";

/** What each wrapper made by {@link wrapBackend} wraps, and with what. */
const wrapped = new WeakMap<object, { backend: Backend; overrides: Partial<Backend> }>();

/** The methods through which a backend shows its files. */
const READING = ["ls", "stat", "read", "readBytes", "glob", "grep"] as const;

/**
 * @internal The backend a wrapper made by {@link wrapBackend} shows the files of: its backend,
 * when the wrapper leaves every reading method to it (a wrapper that only records or rewrites
 * writes); `undefined` for anything else, including a wrapper that replaces a reading method.
 */
export function readsThrough(backend: Backend): Backend | undefined {
  const w = wrapped.get(backend);
  return w && !READING.some((key) => Object.hasOwn(w.overrides, key)) ? w.backend : undefined;
}

/** `backend` with `overrides` in place of its own methods; everything else is the backend's. */
export function wrapBackend<B extends Backend>(backend: B, overrides: Partial<Backend>): B {
  // A forwarded method is bound once per function, not on every property read (a tool call
  // reads one per call).
  const bound = new WeakMap<object, unknown>();
  const proxy = new Proxy(backend, {
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
  wrapped.set(proxy, { backend, overrides });
  return proxy;
}
