/** Memory files never keep a secret: what the agent writes into a memory source is redacted,
 * whatever name the write reaches it by (a directory link on disk included). */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Backend,
  type Core,
  FakeChatModel,
  FilesystemBackend,
  InMemoryStore,
  MemoryHistory,
  type ModelRequest,
  StateBackend,
  StoreBackend,
  createDeepAgent,
  loadCore,
  redactMemoryWrites,
} from "../src/index.js";

const OPENAI = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4";
const AWS = "AKIAZ3MX7QP2RT5WLK8N";
// A GitHub token in two halves, neither of which is a secret on its own.
const GITHUB_HEAD = "ghp_aB3dE5fG7hI9jK1l";
const GITHUB_TAIL = "M3nO5pQ7rS9tU1vW3xY5";

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const text = async (b: Backend, path: string) => {
  const r = await b.readBytes(path);
  if (r.error) throw new Error(r.error.message);
  return new TextDecoder().decode(r.data);
};

describe("memory writes are redacted", () => {
  it("write_file and edit_file into AGENTS.md, from the agent and from a subagent; other files are left alone", async () => {
    const backend = new StoreBackend({ store: new InMemoryStore(), namespace: ["redact"] });
    const lastUser = (req: ModelRequest) => [...req.messages].reverse().find((m) => m.role === "user")?.content ?? "";
    const model = new FakeChatModel((req) => {
      if (req.messages.at(-1)?.role !== "user") return "done";
      const asked = lastUser(req);
      if (asked === "remember")
        return {
          toolCalls: [
            {
              name: "write_file",
              args: { file_path: "AGENTS.md", content: `# Notes\n- key ${OPENAI}\n- aws ${AWS}\n- id ${GITHUB_HEAD}\n` },
            },
            { name: "write_file", args: { file_path: "/notes.md", content: `not memory: ${AWS}\n` } },
          ],
        };
      if (asked === "complete the token")
        return {
          toolCalls: [{ name: "edit_file", args: { file_path: "/./AGENTS.md", old_string: "jK1l\n", new_string: `jK1l${GITHUB_TAIL}\n` } }],
        };
      if (asked === "delegate")
        return { toolCalls: [{ name: "task", args: { description: "sub: remember", subagent_type: "general-purpose" } }] };
      if (asked === "sub: remember")
        return { toolCalls: [{ name: "write_file", args: { file_path: "/AGENTS.md", content: `from the subagent: ${OPENAI}\n` } }] };
      return "done";
    });
    const agent = createDeepAgent(model, { core, backend, enableSkills: false });
    await agent.invoke({ messages: [{ role: "user", content: "remember" }] }, { threadId: "t" });
    const memory = await text(backend, "/AGENTS.md");
    expect(memory).toBe(`# Notes\n- key [REDACTED]\n- aws [REDACTED]\n- id ${GITHUB_HEAD}\n`);
    expect(await text(backend, "/notes.md")).toBe(`not memory: ${AWS}\n`);

    await agent.invoke({ messages: [{ role: "user", content: "complete the token" }] }, { threadId: "t" });
    expect(await text(backend, "/AGENTS.md")).toBe("# Notes\n- key [REDACTED]\n- aws [REDACTED]\n- id [REDACTED]\n");

    await agent.invoke({ messages: [{ role: "user", content: "delegate" }] }, { threadId: "t" });
    expect(await text(backend, "/AGENTS.md")).toBe("from the subagent: [REDACTED]\n");
  });

  it("appends are redacted whole (a secret split across two appends), bytes as UTF-8, and nothing else changes", async () => {
    const inner = new StateBackend({ core });
    const backend = redactMemoryWrites(inner, core, (p) => p === "/AGENTS.md");
    expect(backend.append).toBeTypeOf("function");
    await backend.append?.("/AGENTS.md", `- id ${GITHUB_HEAD}`);
    expect(await text(inner, "/AGENTS.md")).toBe(`- id ${GITHUB_HEAD}`);
    const second = await backend.append?.("/AGENTS.md", `${GITHUB_TAIL}\n`);
    expect(second?.error).toBeUndefined();
    expect(await text(inner, "/AGENTS.md")).toBe("- id [REDACTED]\n");
    // Bytes that are not all UTF-8 are kept, but a secret among them is not.
    const bytes = new Uint8Array([0xff, 0x0a, ...new TextEncoder().encode(`aws ${AWS}\n`)]);
    await backend.write("/AGENTS.md", bytes);
    expect(await text(inner, "/AGENTS.md")).toBe("\uFFFD\naws [REDACTED]\n");
    const clean = new Uint8Array([0xff, 0x0a, 0x61]);
    await backend.write("/AGENTS.md", clean);
    expect(Array.from((await inner.readBytes("/AGENTS.md")).data ?? [])).toEqual([0xff, 0x0a, 0x61]);
    // Other paths: as written, appends included.
    await backend.append?.("/other.md", `aws ${AWS}`);
    expect(await text(inner, "/other.md")).toBe(`aws ${AWS}`);
    // Reads pass through; the version a write returns is the stored file's.
    const w = await backend.write("/AGENTS.md", `k ${OPENAI}`);
    expect(w.version).toBe((await inner.stat("/AGENTS.md")).info?.version);
    expect((await backend.read("/AGENTS.md")).content).toBe("k [REDACTED]");
  });

  it("an append onto a file changed meanwhile is refused, not merged blindly", async () => {
    const inner = new StateBackend({ core });
    await inner.write("/AGENTS.md", "a\n");
    let raced = false;
    // The file changes between the wrapper's read and its write.
    const racing = {
      ...inner,
      stat: (p: string) => inner.stat(p),
      readBytes: async (p: string) => {
        const r = await inner.readBytes(p);
        if (!raced) {
          raced = true;
          await inner.write(p, "b\n");
        }
        return r;
      },
      write: (p: string, c: string | Uint8Array, o?: { ifVersion?: string }) => inner.write(p, c, o),
      append: (p: string, c: string | Uint8Array) => inner.append(p, c),
    } as unknown as Backend;
    const backend = redactMemoryWrites(racing, core, () => true);
    expect((await backend.append?.("/AGENTS.md", "c\n"))?.error?.code).toBe("conflict");
    expect(await text(inner, "/AGENTS.md")).toBe("b\n");
  });
});

describe("a memory source reached through a directory link", () => {
  let base: string;
  let root: string;
  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), "engram-redact-link-"));
    root = join(base, "root");
    mkdirSync(join(root, "real"), { recursive: true });
    mkdirSync(join(base, "outside"));
    symlinkSync(".", join(root, "same"));
    symlinkSync("real", join(root, "docs"));
    symlinkSync(join(base, "outside"), join(root, "out"));
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));
  const onDisk = (path: string) => readFileSync(join(root, path), "utf8");

  it("the agent redacts write_file /same/AGENTS.md and records it as the change of /AGENTS.md", async () => {
    const history = new MemoryHistory({ store: new InMemoryStore() });
    const model = new FakeChatModel([
      { toolCalls: [{ name: "write_file", args: { file_path: "/same/AGENTS.md", content: `- key ${OPENAI}\n` } }] },
      { toolCalls: [{ name: "edit_file", args: { file_path: "/same/same/AGENTS.md", old_string: "- key", new_string: `- aws ${AWS}` } }] },
      "done",
    ]);
    const backend = new FilesystemBackend({ rootDir: root, core });
    const agent = createDeepAgent(model, { core, backend, memorySources: ["/AGENTS.md"], memoryHistory: history, enableSkills: false });
    await agent.invoke({ messages: [{ role: "user", content: "remember" }] }, { threadId: "t", userId: "u" });
    expect(onDisk("AGENTS.md")).toBe("- aws [REDACTED] [REDACTED]\n");
    const changes = await history.list("u");
    expect(changes.map((c) => [c.target, c.after])).toEqual([
      ["/AGENTS.md", "- aws [REDACTED] [REDACTED]\n"],
      ["/AGENTS.md", "- key [REDACTED]\n"],
    ]);
  });

  it("by a predicate or by source paths (a source named through a link too); other files and escapes are left to the backend", async () => {
    const fs = new FilesystemBackend({ rootDir: root, core });
    const byName = redactMemoryWrites(fs, core, (p) => p === "/AGENTS.md");
    expect(await byName.write("/same/AGENTS.md", `k ${OPENAI}\n`)).toMatchObject({ path: "/AGENTS.md" });
    expect(onDisk("AGENTS.md")).toBe("k [REDACTED]\n");
    expect((await byName.edit("/same/./same/AGENTS.md", "k", `aws ${AWS}`)).error).toBeUndefined();
    expect(onDisk("AGENTS.md")).toBe("aws [REDACTED] [REDACTED]\n");
    await byName.write("/same/notes.md", `aws ${AWS}\n`);
    expect(onDisk("notes.md")).toBe(`aws ${AWS}\n`);
    expect((await byName.write("/out/AGENTS.md", "x")).error?.code).toBe("path_escape");

    const bySource = redactMemoryWrites(fs, core, ["/docs/AGENTS.md"]);
    await bySource.write("/real/AGENTS.md", `k ${OPENAI}\n`);
    expect(onDisk("real/AGENTS.md")).toBe("k [REDACTED]\n");
    await bySource.write("/same/docs/new/../AGENTS.md", `aws ${AWS}\n`);
    expect(onDisk("real/AGENTS.md")).toBe("aws [REDACTED]\n");
    await bySource.write("/docs/other.md", `aws ${AWS}\n`);
    expect(onDisk("real/other.md")).toBe(`aws ${AWS}\n`);
  });

  it("FilesystemBackend.realPath resolves parent links inside the root, keeps missing parents and the last name", async () => {
    const fs = new FilesystemBackend({ rootDir: root, core });
    expect(await fs.realPath("/same/docs/AGENTS.md")).toEqual({ path: "/real/AGENTS.md" });
    expect(await fs.realPath("/same/docs/a/b/c.md")).toEqual({ path: "/real/a/b/c.md" });
    expect(await fs.realPath("/docs")).toEqual({ path: "/docs" });
    expect(await fs.realPath("/")).toEqual({ path: "/" });
    expect((await fs.realPath("/out/x.md")).error?.code).toBe("path_escape");
    expect((await fs.realPath("/../x")).error?.code).toBe("path_escape");
    const host = new FilesystemBackend({ rootDir: root, core, virtualMode: false });
    expect(await host.realPath(join(fs.rootDir, "same/docs/x.md"))).toEqual({ path: join(fs.rootDir, "real/x.md") });
  });
});

describe("a memory source changed by a command (execute)", () => {
  it("is written back redacted after the command, and the history records the change without the secret", async () => {
    const root = mkdtempSync(join(tmpdir(), "engram-redact-exec-"));
    try {
      const fs = new FilesystemBackend({ rootDir: root, execute: { readOnly: false } });
      if (!fs.execute) throw new Error("no execute");
      const probe = await fs.execute("true");
      if (probe.error?.code === "unsupported") return; // A kernel without the sandbox's parts.
      await fs.write("/AGENTS.md", "# Notes\n");
      const history = new MemoryHistory({ store: new InMemoryStore(), namespace: ["h"] });
      const model = new FakeChatModel((req) => {
        if (req.messages.at(-1)?.role !== "user") return "done";
        return {
          toolCalls: [
            { name: "execute", args: { command: `printf -- '- key %s\\n' ${OPENAI} >> AGENTS.md; printf 'aws ${AWS}\\n' > notes.md` } },
          ],
        };
      });
      const agent = createDeepAgent(model, {
        core,
        backend: fs,
        memorySources: ["/AGENTS.md"],
        memoryHistory: history,
        enableSkills: false,
      });
      await agent.invoke({ messages: [{ role: "user", content: "remember the key" }] }, { threadId: "t", userId: "u" });
      expect(readFileSync(join(root, "AGENTS.md"), "utf8")).toBe("# Notes\n- key [REDACTED]\n");
      // Other files the command wrote are the project's: left as written.
      expect(readFileSync(join(root, "notes.md"), "utf8")).toBe(`aws ${AWS}\n`);
      const changes = await history.list("u");
      // One change: the command's (the redaction write back changes nothing the history shows).
      expect(changes.map((c) => [c.target, c.before, c.after])).toEqual([["/AGENTS.md", "# Notes\n", "# Notes\n- key [REDACTED]\n"]]);
      expect(JSON.stringify(changes)).not.toContain(OPENAI);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
