/** Durable across reloads: an agent in the page writes a long-term fact and an AGENTS.md edit to
 * IndexedDB; after a reload — and after Chromium itself restarts on the same profile — the next
 * model request carries both, and the thread. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ModelServer, startModelServer } from "../../store-cloudflare/test/fixtures/model-server.js";
import { LAUNCH, type Site, call, chromium, openPage, ready, serveTestPage } from "./fixtures/host.js";

let model: ModelServer;
let site: Site;
let profile: string;

beforeAll(async () => {
  model = await startModelServer("D'accord.");
  site = await serveTestPage(model.url);
  profile = await mkdtemp(join(tmpdir(), "engram-chromium-profile-"));
});

afterAll(async () => {
  await site?.close();
  await model?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
});

/** Chromium on the profile directory, for the duration of `use`. */
async function withChromium(use: (context: BrowserContext) => Promise<void>): Promise<void> {
  const context = await chromium.launchPersistentContext(profile, LAUNCH);
  try {
    await use(context);
  } finally {
    await context.close();
  }
}

/** The messages of the model's streamed (answering) requests since `from`, as text. */
const sentSince = (from: number) =>
  model.requests
    .slice(from)
    .filter((r) => r.stream)
    .map((r) => JSON.stringify(r.messages));

it("keeps a fact, an AGENTS.md edit and the thread across a reload and a browser restart", async () => {
  await withChromium(async (context) => {
    const page = await openPage(context, site);
    expect(await call(page, "remember")).toMatchObject({ fact: { fact: { content: "Prefers metric units" } }, edited: { occurrences: 1 } });
    expect(await call(page, "ask", "My name is Ada.")).toBe("D'accord.");

    await page.reload();
    await ready(page);
    const before = model.requests.length;
    expect(await call(page, "ask", "How tall is Everest?")).toBe("D'accord.");
    const [sent] = sentSince(before);
    expect(sent).toContain("Answer in French.");
    expect(sent).not.toContain("Answer briefly.");
    expect(sent).toContain("Prefers metric units");
    expect(sent).toContain("My name is Ada.");
    expect(sent).toContain("How tall is Everest?");
  });

  // A new browser process on the same profile: what the tab wrote is on disk.
  await withChromium(async (context) => {
    const page = await openPage(context, site);
    const before = model.requests.length;
    expect(await call(page, "ask", "And Mont Blanc?")).toBe("D'accord.");
    const [sent] = sentSince(before);
    expect(sent).toContain("Answer in French.");
    expect(sent).toContain("Prefers metric units");
    expect(sent).toContain("How tall is Everest?");
    expect(sent).toContain("And Mont Blanc?");
  });
});
