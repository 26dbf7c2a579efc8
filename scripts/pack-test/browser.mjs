// The browser example: built with its own build script, served on 127.0.0.1, run in headless
// Chromium (Debian's /usr/bin/chromium through playwright-core, as the edge tests do).
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { extname, join } from "node:path";
import { spawnSync } from "node:child_process";

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm" };

export async function runPage(root, dir, outDir) {
  const built = spawnSync("node", ["build.mjs", outDir], { cwd: dir, encoding: "utf8", timeout: 120_000 });
  if (built.status !== 0) throw new Error(`build.mjs failed:\n${built.stdout}${built.stderr}`);
  const server = createServer(async (req, res) => {
    const name = new URL(req.url ?? "/", "http://x").pathname.replace(/^\/$/, "/index.html").slice(1);
    if (!/^[\w.-]+$/.test(name)) return void res.writeHead(404).end();
    try {
      const body = await readFile(join(outDir, name));
      res.writeHead(200, { "content-type": TYPES[extname(name)] ?? "application/octet-stream" }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { chromium } = await import(join(root, "node_modules/playwright-core/index.mjs"));
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.waitForFunction(() => globalThis.__engramExample !== undefined, undefined, { timeout: 60_000 });
    const result = await page.evaluate(() => globalThis.__engramExample);
    if (errors.length > 0) throw new Error(`page errors: ${errors.join("\n")}`);
    if (result.error) throw new Error(result.error);
    return result;
  } finally {
    await browser.close();
    await new Promise((resolve) => server.close(resolve));
  }
}
