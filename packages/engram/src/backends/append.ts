import type { Backend } from "./protocol.js";

/**
 * Appends through `backend.append` when it has one, else by read + write guarded by the file's
 * version, so a concurrent writer makes it a `conflict` rather than a lost update.
 */
export async function appendTo(backend: Backend, path: string, content: string | Uint8Array) {
  if (backend.append) return backend.append(path, content);
  const stat = await backend.stat(path);
  if (stat.error && stat.error.code !== "file_not_found") return { error: stat.error };
  const version = stat.info?.version ?? "0";
  const current = version === "0" ? undefined : await backend.readBytes(path);
  if (current?.error) return { error: current.error };
  const extra = typeof content === "string" ? new TextEncoder().encode(content) : content;
  const head = current?.data ?? new Uint8Array();
  const joined = new Uint8Array(head.length + extra.length);
  joined.set(head);
  joined.set(extra, head.length);
  return backend.write(path, joined, { ifVersion: version });
}
