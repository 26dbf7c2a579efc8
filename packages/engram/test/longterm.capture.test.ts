/** Long-term memory, pure pieces: capture filtering and signals, secret redaction, upload
 * stripping, tolerant parsing of the model's update. */
import { describe, expect, it } from "vitest";
import type { Message } from "../src/models/types.js";
import { captureConversation, detectSignals, filterForMemory, parseMemoryUpdate, redactSecrets } from "../src/memory/longterm/index.js";
import { escapeTags, stripUploadMentions } from "../src/memory/longterm/text.js";

const user = (content: string): Message => ({ role: "user", content });
const assistant = (content: string): Message => ({ role: "assistant", content });

describe("capture", () => {
  it("keeps user messages and final assistant replies, never tool traffic", () => {
    const kept = filterForMemory([
      user("list my files"),
      { role: "assistant", content: "Let me look.", toolCalls: [{ id: "c1", name: "ls", args: { path: "/" } }] },
      { role: "tool", content: "a.txt\nb.txt", toolCallId: "c1" },
      assistant("You have a.txt and b.txt."),
    ]);
    expect(kept).toEqual([user("list my files"), assistant("You have a.txt and b.txt.")]);
  });

  it("strips <uploaded_files> blocks and drops an upload-only turn with its reply", () => {
    const kept = filterForMemory([
      user("<uploaded_files>\n- /mnt/user-data/uploads/report.pdf\n</uploaded_files>"),
      assistant("I see your report."),
      user("Summarise it <UPLOADED_FILES>x.csv</UPLOADED_FILES> in French please"),
      assistant("Voici le résumé."),
      user("and this <uploaded_files>never closed"),
      assistant("ok"),
    ]);
    expect(kept).toEqual([user("Summarise it  in French please"), assistant("Voici le résumé."), user("and this"), assistant("ok")]);
    expect(JSON.stringify(kept)).not.toContain("report.pdf");
  });

  it("captures a run without a final reply (maxTurns, empty answer), but nothing without a user message", () => {
    // A run stopped at maxTurns: every assistant message has tool calls.
    const maxTurns: Message[] = [
      user("I work at Acme; list my files"),
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "ls", args: {} }] },
      { role: "tool", content: "a.txt", toolCallId: "c1" },
    ];
    expect(captureConversation(maxTurns)?.messages).toEqual([user("I work at Acme; list my files")]);
    expect(captureConversation([user("I live in Lyon"), assistant("")])?.messages).toEqual([user("I live in Lyon")]);
    expect(captureConversation([user("<uploaded_files>a</uploaded_files>"), assistant("got it")])).toBeUndefined();
    expect(captureConversation([assistant("hello")])).toBeUndefined();
    expect(captureConversation([user("hi"), assistant("hello")])).toEqual({
      messages: [user("hi"), assistant("hello")],
      correction: false,
      reinforcement: false,
      forget: false,
    });
    // Damaged input captures what it can and never throws.
    expect(captureConversation(null as never)).toBeUndefined();
    expect(captureConversation([null, { role: "user", content: 42 }, user("still here")] as never)?.messages).toEqual([user("still here")]);
  });

  it.each([
    "No, that's wrong, use pnpm.",
    "That is not what I asked for",
    "you misunderstood the task",
    "Try again with tabs",
    "不对，应该用 pnpm",
    "你理解错了我的意思",
    "请改用 TypeScript",
    "重新来一遍",
  ])("detects a correction: %s", (text) => {
    expect(detectSignals([user(text), assistant("ok")])).toEqual({ correction: true, reinforcement: false });
  });

  it.each(["Yes, exactly", "Perfect!", "That's exactly what I wanted", "keep doing that", "完全正确", "对，就是这样", "正是我想要的"])(
    "detects reinforcement: %s",
    (text) => {
      expect(detectSignals([user(text)])).toEqual({ correction: false, reinforcement: true });
    },
  );

  it("ignores look-alikes and the assistant's own words", () => {
    for (const text of ["The perfect solution is hard", "这个图形不对称", "the redo log is large", "exactness matters"]) {
      expect(detectSignals([user(text)]), text).toEqual({ correction: false, reinforcement: false });
    }
    expect(detectSignals([user("hi"), assistant("That's wrong, try again")]).correction).toBe(false);
  });

  it("looks at the last 6 user messages only, and a correction wins over reinforcement", () => {
    const old = [user("that's wrong"), ...Array.from({ length: 6 }, (_, i) => user(`message ${i}`))];
    expect(detectSignals(old).correction).toBe(false);
    expect(detectSignals([user("that's wrong"), ...old.slice(2)]).correction).toBe(true);
    expect(detectSignals([user("perfect!"), user("不对")])).toEqual({ correction: true, reinforcement: false });
  });
});

describe("redaction", () => {
  const secrets: [string, string][] = [
    ["OpenAI key", "my key is sk-proj-AbCdEf0123456789xyzXYZ0123"],
    ["Anthropic key", "use sk-ant-api03-abcdefghijklmnopqrstuv_wxyz"],
    ["AWS access key", "aws id AKIAIOSFODNN7EXAMPLE here"],
    ["GitHub token", "token ghp_0123456789abcdefghijABCDEFGHIJ0123456789"],
    ["GitHub fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"],
    ["Slack token", "slack xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp"],
    ["bearer", "curl -H 'Authorization: Bearer abc.def-ghi_jkl0123456789'"],
    ["password=", "login with password=Hunter2!xyz please"],
    ["password:", 'config {"password": "s3cr3t-value"}'],
    ["api_key:", "api_key: 9f8e7d6c5b4a39281706"],
    ["prose password", "my password is correcthorsebattery"],
    ["Chinese password", "我的密码是 abc123xyz，别忘了"],
    ["URL credentials", "postgres://admin:pa55word@db.example.com/app"],
    ["JWT", "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"],
    ["private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234\nabcd\n-----END RSA PRIVATE KEY-----"],
    ["cut-off private key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA"],
  ];
  it.each(secrets)("redacts %s", (_, text) => {
    const out = redactSecrets(text);
    expect(out).toContain("[REDACTED]");
    for (const piece of [
      "0123456789xyz",
      "ant-api03",
      "IOSFODNN7",
      "0123456789abcdefghij",
      "11ABCDEFG",
      "AbCdEfGh",
      "ghi_jkl",
      "Hunter2",
      "s3cr3t",
      "9f8e7d",
      "horsebattery",
      "abc123",
      "pa55word",
      "dozjgNry",
      "MIIEpA",
      "b3BlbnNz",
    ]) {
      expect(out).not.toContain(piece);
    }
    expect(redactSecrets(out)).toBe(out); // idempotent
  });

  it("leaves ordinary text alone", () => {
    for (const text of [
      "The user prefers tabs over spaces.",
      "the token is expired",
      "max tokens 2000",
      "用户喜欢喝咖啡",
      "sk-learn is a library",
    ]) {
      expect(redactSecrets(text)).toBe(text);
    }
  });
});

describe("text helpers", () => {
  it("escapes tags so nothing can close a block", () => {
    expect(escapeTags("</memory><system>x & y")).toBe("&lt;/memory&gt;&lt;system&gt;x &amp; y");
  });

  it("strips sentences about uploads, in English and Chinese", () => {
    expect(stripUploadMentions("Works on Engram. Uploaded the file report.pdf for review. Likes Rust.")).toBe(
      "Works on Engram. Likes Rust.",
    );
    expect(stripUploadMentions("用户上传了一个文件。喜欢咖啡。")).toBe("喜欢咖啡。");
    expect(stripUploadMentions("Prefers PDF documents.")).toBe("Prefers PDF documents.");
  });
});

describe("parsing the model's update", () => {
  const update = {
    user: { workContext: { summary: "Engineer at Acme.", shouldUpdate: true } },
    history: {},
    newFacts: [{ content: "Prefers pnpm", category: "preference", confidence: 0.9 }],
    factsToRemove: ["fact_0000aaaa"],
  };

  it("reads bare JSON, fenced JSON and JSON wrapped in prose or a reasoning trace", () => {
    const json = JSON.stringify(update);
    for (const reply of [
      json,
      `\`\`\`json\n${json}\n\`\`\``,
      `Sure! Here is the update:\n${json}\nLet me know {if} you need more.`,
      `<think>the user said {"nothing": 1} earlier</think>\n${JSON.stringify(update, null, 2)}`,
    ]) {
      const r = parseMemoryUpdate(reply);
      expect(r.ok, reply).toBe(true);
      if (r.ok) {
        expect(r.update.user.workContext).toEqual({ summary: "Engineer at Acme.", shouldUpdate: true });
        expect(r.update.newFacts).toEqual([{ content: "Prefers pnpm", category: "preference", confidence: 0.9 }]);
        expect(r.update.factsToRemove).toEqual(["fact_0000aaaa"]);
      }
    }
  });

  it("normalises loose types: string numbers and booleans, unknown categories, out-of-range confidence", () => {
    const r = parseMemoryUpdate(
      JSON.stringify({
        user: { topOfMind: { summary: "Shipping v2", shouldUpdate: "true" } },
        newFacts: [
          { content: "a", category: "Hobby", confidence: "0.8" },
          { content: "b", category: "GOAL", confidence: 1.5 },
        ],
      }),
    );
    expect(r).toEqual({
      ok: true,
      update: {
        user: { topOfMind: { summary: "Shipping v2", shouldUpdate: true } },
        history: {},
        newFacts: [
          { content: "a", category: "context", confidence: 0.8 },
          { content: "b", category: "goal", confidence: 1 },
        ],
        factsToRemove: [],
      },
      issues: [],
    });
  });

  it("drops a malformed part with a reason and keeps the rest; nothing usable is a rejection", () => {
    const cases: [object, object, RegExp][] = [
      [
        { newFacts: [{ content: "ok", confidence: 0.9 }, { confidence: 0.9 }], factsToRemove: ["fact_1"] },
        { newFacts: [{ content: "ok", category: "context", confidence: 0.9 }], factsToRemove: ["fact_1"] },
        /newFacts\.1/,
      ],
      [{ newFacts: "none", factsToRemove: ["fact_1"] }, { newFacts: [], factsToRemove: ["fact_1"] }, /newFacts: not an array/],
      [
        { user: { workContext: "Engineer" }, factsToRemove: ["fact_1"] },
        { user: {}, factsToRemove: ["fact_1"] },
        /workContext: a plain string/,
      ],
    ];
    for (const [bad, kept, issue] of cases) {
      const r = parseMemoryUpdate(JSON.stringify(bad));
      expect(r.ok, JSON.stringify(bad)).toBe(true);
      if (r.ok) {
        expect(r.update).toMatchObject(kept);
        expect(r.issues.join("; ")).toMatch(issue);
      }
    }
    for (const bad of [{ newFacts: [{ content: "x", confidence: "high" }] }, { factsToRemove: [{ id: "fact_1" }] }]) {
      expect(parseMemoryUpdate(JSON.stringify(bad)).ok, JSON.stringify(bad)).toBe(false);
    }
  });

  it("rejects replies without an update object", () => {
    for (const reply of ["I could not find anything worth remembering.", "{not json}", '{"unrelated": true}', '{"user": {']) {
      expect(parseMemoryUpdate(reply).ok).toBe(false);
    }
  });
});
