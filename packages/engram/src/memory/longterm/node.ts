/**
 * The Node-only part of long-term memory: {@link FileMemoryStorage} and {@link FilePendingWork}
 * (they import `node:fs`). Edge bundles import `./index.js` instead, which never reaches this file.
 * @module
 */
export { FileMemoryStorage, type FileMemoryStorageOptions } from "./file-storage.js";
export { FilePendingWork, type FilePendingWorkOptions } from "./pending-file.js";
