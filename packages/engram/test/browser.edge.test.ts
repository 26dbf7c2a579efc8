/** The WASM core in headless Chromium, loaded by the page the way a browser app loads it. */
import { readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { bundleEntry } from "./fixtures/bundle.js";
import { expectedScenario } from "./fixtures/scenario.js";

const CHROMIUM = "/usr/bin/chromium";
const TYPES: Record<string, string> = {
  ".html": "text/html",
  ".js": "text/javascript",
  ".wasm": "application/wasm",
};

let dir: string;
let server: Server;
let browser: Browser;

beforeAll(async () => {
  dir = await bundleEntry(join(import.meta.dirname, "fixtures/browser-entry.ts"), "app.js");
  await writeFile(join(dir, "index.html"), '<!doctype html><script type="module" src="/app.js"></script>');
  server = createServer(async (req, res) => {
    const name = new URL(req.url ?? "/", "http://x").pathname.replace(/^\/$/, "/index.html").slice(1);
    if (!/^[\w.-]+$/.test(name)) return void res.writeHead(404).end();
    try {
      const body = await readFile(join(dir, name));
      res.writeHead(200, { "content-type": TYPES[extname(name)] ?? "application/octet-stream" }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

it("greps, globs and routes on the WASM core in headless Chromium", async () => {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  const { port } = server.address() as AddressInfo;
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.waitForFunction(() => (globalThis as { __engram?: unknown }).__engram !== undefined);
  const result = (await page.evaluate(() => (globalThis as { __engram?: unknown }).__engram)) as Record<string, unknown>;
  expect(errors).toEqual([]);
  expect(result.error).toBeUndefined();
  expect(String(result.runtime)).toMatch(/HeadlessChrome/);
  const { runtime: _runtime, ...rest } = result;
  expect(rest).toEqual({ kind: "wasm", ...expectedScenario });
});
