/**
 * The WASM core's heap (bindings/wasm/src/heap.rs): linear memory grows geometrically, not by
 * what each allocation needs, so filling a table costs O(log n) `memory.grow`s — each of which
 * makes V8 run a full GC once the heap is a few MB (writes slowed down as a table
 * grew). Counted, not timed. Freed memory is reused and contents survive. Runs in the `wasm`
 * project (the native core has no linear memory).
 */
import { requireWasmGlue } from "#node-access";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { type Core, loadCore } from "../src/index.js";

let core: Core;
let memory: WebAssembly.Memory | undefined;
let glue: { FileInfo: { prototype: { free(): void } } } | undefined;
beforeAll(async () => {
  core = await loadCore();
  if (core.kind === "wasm") {
    // Loaded already (required synchronously where Node can, else imported, as the loader
    // does): initSync returns the instance's exports without instantiating again.
    const loaded = requireWasmGlue() ?? (await import("@engram/wasm"));
    memory = loaded.initSync(undefined as never).memory;
    glue = loaded as unknown as typeof glue;
  }
});

const FILE = 8 * 1024;

/** Writes `files` files of 8 KiB one by one; returns how many times linear memory grew. */
function fill(table: ReturnType<Core["createFileTable"]>, files: number, tag: string): number {
  const mem = memory as WebAssembly.Memory;
  let grows = 0;
  let size = mem.buffer.byteLength;
  for (let i = 0; i < files; i++) {
    const body = `${tag} ${i}\n`.padEnd(FILE, "x");
    expect(table.write(`/heap/${tag}/f${i}.txt`, body).error).toBeUndefined();
    if (mem.buffer.byteLength !== size) {
      grows++;
      size = mem.buffer.byteLength;
    }
  }
  return grows;
}

describe.runIf(process.env.ENGRAM_CORE === "wasm")("WASM heap", () => {
  it("grows linear memory geometrically while a table fills (32 MiB in ≤ 12 grows)", () => {
    const table = core.createFileTable();
    // 4,096 × 8 KiB: std's allocator grew by ~64 KiB per request here (~500 grows).
    const grows = fill(table, 4096, "a");
    expect(grows).toBeLessThanOrEqual(12);
    expect(table.read("/heap/a/f4095.txt", { limit: 1 }).content).toBe("a 4095");
    expect(table.readBytes("/heap/a/f0.txt")?.length).toBe(FILE);
  });

  it("reuses freed memory: write, delete and write again stays within the peak", () => {
    const mem = memory as WebAssembly.Memory;
    const table = core.createFileTable();
    fill(table, 1024, "b");
    expect(table.delete("/heap/b").error).toBeUndefined();
    const peak = mem.buffer.byteLength;
    for (let round = 0; round < 5; round++) {
      fill(table, 1024, "b");
      expect(table.delete("/heap/b").error).toBeUndefined();
    }
    expect(mem.buffer.byteLength).toBeLessThanOrEqual(peak * 1.5);
    fill(table, 16, "c");
    for (let i = 0; i < 16; i++) expect(table.read(`/heap/c/f${i}.txt`, { limit: 1 }).content).toBe(`c ${i}`);
  });

  it("releases each listed entry once it is copied, not when the finalizer gets to it", () => {
    // Left to the FinalizationRegistry, entries pile up in a loop of awaited calls, which never
    // lets it run: the heap grew and collections slowed listings down.
    const table = core.createFileTable();
    for (let i = 0; i < 10; i++) table.write(`/list/f${i}.txt`, `${i}`);
    const free = vi.spyOn(glue?.FileInfo.prototype as { free(): void }, "free");
    try {
      const listed = table.ls("/list");
      expect(listed.entries?.map((e) => e.path)).toEqual(Array.from({ length: 10 }, (_, i) => `/list/f${i}.txt`));
      expect(free).toHaveBeenCalledTimes(10);
    } finally {
      free.mockRestore();
    }
  });
});
