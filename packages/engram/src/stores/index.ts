export type { ListOptions, ListResult, Namespace, PutOptions, PutResult, Store, StoreItem } from "./types.js";
export { validateNamespace } from "./types.js";
export { InMemoryStore } from "./memory.js";
