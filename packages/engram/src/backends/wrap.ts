/**
 * Decorating a backend: a wrapper that replaces some operations and forwards every other
 * property to the backend itself (with the backend as `this`, so class backends with private
 * fields keep working).
 * @module
 */
import type { Backend } from "./protocol.js";

/** `backend` with `overrides` in place of its own methods; everything else is the backend's. */
export function wrapBackend<B extends Backend>(backend: B, overrides: Partial<Backend>): B {
  return new Proxy(backend, {
    get(target, key) {
      if (Object.hasOwn(overrides, key)) return overrides[key as keyof Backend];
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
