/** Memory files never keep a secret: what the agent writes into a memory source is redacted. */
import { beforeAll, describe, expect, it } from "vitest";
import {
  type Backend,
  type Core,
  FakeChatModel,
  InMemoryStore,
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
