/** MCP tools against a real MCP server process (written with the same SDK), over stdio and Streamable HTTP. */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EngramError } from "../src/index.js";
import { type McpServerConfig, McpToolset, namespacedToolName } from "../src/mcp/index.js";
import { bundledFixture } from "./fixtures/node-bundle.js";

// The server fixture, bundled once, starts with plain node (not tsx) each time.
const node = process.execPath;
let server: string;
let httpServer: ChildProcess;
let httpUrl: string;

beforeAll(async () => {
  server = await bundledFixture(fileURLToPath(new URL("./fixtures/mcp/server.ts", import.meta.url)));
  httpServer = spawn(node, [server, "http"], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  httpServer.stdout?.setEncoding("utf8");
  httpServer.stdout?.on("data", (d: string) => {
    out += d;
  });
  for (let i = 0; i < 300 && !/PORT \d+/.test(out); i++) await new Promise((r) => setTimeout(r, 50));
  const port = /PORT (\d+)/.exec(out)?.[1];
  if (!port) throw new Error(`the MCP HTTP fixture did not start: ${out}`);
  httpUrl = `http://127.0.0.1:${port}/mcp`;
}, 30_000);

afterAll(async () => {
  httpServer.kill();
  await once(httpServer, "exit").catch(() => undefined);
});

const transports: [string, () => McpServerConfig][] = [
  ["stdio", () => ({ command: node, args: [server, "stdio"] })],
  ["Streamable HTTP", () => ({ url: httpUrl })],
];

describe.each(transports)("MCP over %s", (_, config) => {
  let mcp: McpToolset;
  beforeAll(async () => {
    mcp = await McpToolset.connect({ fixture: config() }, { callTimeoutMs: 5_000 });
  }, 30_000);
  afterAll(() => mcp.close());

  const tool = async (name: string) => {
    const t = (await mcp.tools()).find((x) => x.name === name);
    if (!t) throw new Error(`no tool ${name}`);
    return t;
  };

  it("lists namespaced tools with the server's JSON Schemas as they are", async () => {
    const tools = await mcp.tools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      ["fixture__add", "fixture__big", "fixture__fail", "fixture__pixel", "fixture__shout_loud", "fixture__slow", "fixture__unlock"].sort(),
    );
    const add = await tool("fixture__add");
    expect(add.mcpName).toBe("add");
    expect(add.jsonSchema).toMatchObject({
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    });
    expect(add.description).toBe("Adds two numbers");
  });

  it("calls tools and maps text, images and errors", async () => {
    expect(await (await tool("fixture__add")).run({ a: 2, b: 3 }, {})).toEqual({ content: "5" });
    expect(await (await tool("fixture__shout_loud")).run({ text: "hi" }, {})).toEqual({ content: "HI" });
    const pixel = await (await tool("fixture__pixel")).run({}, {});
    expect(pixel.content).toMatch(/^here is a pixel\n\[image attached: image\/png, \d+ bytes\]$/);
    expect(pixel.attachments).toEqual([{ type: "image", mimeType: "image/png", data: expect.stringMatching(/^iVBOR/) }]);
    expect(await (await tool("fixture__fail")).run({}, {})).toEqual({ content: "disk on fire", isError: true });
    const bad = await (await tool("fixture__add")).run({ a: "two" }, {});
    expect(bad.isError).toBe(true);
  });

  it("lists once, and again only after the server says the list changed", async () => {
    const first = await mcp.tools();
    const second = await mcp.tools();
    expect(second[0]).toBe(first[0]); // the cached objects, not a fresh listing
    expect(first.some((t) => t.name === "fixture__secret")).toBe(false);
    expect((await (await tool("fixture__unlock")).run({}, {})).content).toBe("unlocked");
    let names: string[] = [];
    for (let i = 0; i < 100 && !names.includes("fixture__secret"); i++) {
      names = (await mcp.tools()).map((t) => t.name);
      if (!names.includes("fixture__secret")) await new Promise((r) => setTimeout(r, 20));
    }
    expect(names).toContain("fixture__secret");
    expect(await (await tool("fixture__secret")).run({}, {})).toEqual({ content: "42" });
  });

  it("cancels a call with the run's AbortSignal", async () => {
    const controller = new AbortController();
    const pending = (await tool("fixture__slow")).run({ ms: 20_000 }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const r = await pending;
    expect(r.isError).toBe(true);
  });
});

/** Over the 10 MiB a stdio message may take: the SDK closes the connection on it. */
const OVERSIZED = 11 * 1024 * 1024;

describe("MCP connection loss (stdio)", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "engram-mcp-loss-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The fixture over stdio, through `sh`, which logs every start to `log` and lets only the
   * first `starts` of them run the server (the others exit at once). */
  const flaky = (log: string, starts: number): McpServerConfig => ({
    command: "/bin/sh",
    args: ["-c", 'echo start >> "$0"; [ "$(wc -l < "$0")" -le "$1" ] || exit 1; exec "$2" "$3" stdio', log, String(starts), node, server],
  });
  const startsIn = (log: string) => readFileSync(log, "utf8").trim().split("\n").length;

  it("answers a result over the limit as too large, and the next call connects again", async () => {
    const log = join(dir, "again.log");
    const mcp = await McpToolset.connect({ fixture: flaky(log, 2) }, { callTimeoutMs: 20_000 });
    try {
      const tools = await mcp.tools();
      const run = (name: string, input: Record<string, unknown>) => tools.find((t) => t.name === name)?.run(input, {});
      const big = await run("fixture__big", { bytes: OVERSIZED });
      expect(big).toEqual({
        content: expect.stringMatching(/^Error: big on MCP server 'fixture' failed: its result was too large: over 10485760 bytes/),
        isError: true,
      });
      expect(await run("fixture__add", { a: 2, b: 3 })).toEqual({ content: "5" });
      expect(startsIn(log)).toBe(2);
      // A result within the limit is fine on the new connection.
      expect((await run("fixture__big", { bytes: 1000 }))?.content).toHaveLength(1000);
    } finally {
      await mcp.close();
    }
  }, 60_000);

  it("gives a lost server up after three failed attempts to connect again", async () => {
    const log = join(dir, "gone.log");
    const mcp = await McpToolset.connect({ fixture: flaky(log, 1) }, { callTimeoutMs: 20_000 });
    try {
      const add = (await mcp.tools()).find((t) => t.name === "fixture__add");
      const big = (await mcp.tools()).find((t) => t.name === "fixture__big");
      expect((await big?.run({ bytes: OVERSIZED }, {}))?.content).toMatch(/too large/);
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await add?.run({ a: 1, b: 1 }, {}));
      expect(results.map((r) => r?.isError)).toEqual([true, true, true, true]);
      expect(results.slice(0, 3).map((r) => r?.content)).toEqual(
        Array(3).fill(expect.stringMatching(/could not connect to MCP server 'fixture'/)),
      );
      expect(results[3]?.content).toMatch(/MCP server 'fixture' is gone: 3 attempts to connect to it again failed/);
      // The first start, then one per attempt: the last call made none.
      expect(startsIn(log)).toBe(4);
    } finally {
      await mcp.close();
    }
  }, 60_000);
});

describe("MCP configuration", () => {
  it("refuses bad server names and configs with a ConfigError", async () => {
    await expect(McpToolset.connect({ "bad name": { url: "http://127.0.0.1:1/" } })).rejects.toMatchObject({ code: "invalid_config" });
    await expect(McpToolset.connect({ x: {} as McpServerConfig })).rejects.toMatchObject({
      code: "invalid_config",
      option: "mcpServers.x",
    });
  });

  it("fails to connect with a typed error and closes the servers that did connect", async () => {
    const err = await McpToolset.connect({
      ok: { command: node, args: [server, "stdio"] },
      down: { url: "http://127.0.0.1:9/mcp" },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngramError);
    expect((err as EngramError).message).toContain("'down'");
  }, 30_000);

  it("keeps namespaced names within 64 provider-safe characters, uniquely", () => {
    const long = namespacedToolName("srv", `${"x".repeat(80)}a`);
    const other = namespacedToolName("srv", `${"x".repeat(80)}b`);
    expect(long.length).toBeLessThanOrEqual(64);
    expect(long).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(long).not.toBe(other);
  });
});
