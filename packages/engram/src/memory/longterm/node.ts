/**
 * The Node-only part of long-term memory: {@link FileMemoryStorage} (it imports `node:fs`).
 * Edge bundles import `./index.js` instead, which never reaches this file.
 * @module
 */
export { FileMemoryStorage, type FileMemoryStorageOptions } from "./file-storage.js";
