export type {
  Backend,
  BackendEditOptions,
  BackendGlobOptions,
  BackendGrepOptions,
  BackendReadResult,
  BackendWriteOptions,
  ExecuteOptions,
  ExecuteResult,
  ToolTextRequest,
  VersionedFileInfo,
} from "./protocol.js";
export { StateBackend, type StateBackendOptions, type StateMark } from "./state.js";
export { StoreBackend, type StoreBackendOptions, type NamespaceContext, type StoredFile } from "./store.js";
export { CompositeBackend, type CompositeBackendOptions } from "./composite.js";
export { FilesystemBackend, type FilesystemBackendOptions, type FilesystemSearchOptions } from "./filesystem.js";
export type { SandboxDefaults } from "./sandbox.js";
