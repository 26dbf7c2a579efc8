/**
 * Security guarantees of the core, on both cores (vitest projects `native` and `wasm`): secrets
 * never reach memory verbatim, hostile regexes and paths are refused at once, the binding
 * boundary answers wrong arguments with a typed error, model-chosen limits are clamped, and no
 * truncation splits a character.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { cutAt } from "../src/core/text.js";
import { type Core, EngramError, loadCore } from "../src/index.js";
import { loadedCore } from "../src/kit.js";
import { REDACTED, redactSecrets } from "../src/memory/longterm/redact.js";
import { StateBackend } from "../src/backends/state.js";
import { prng } from "../src/testing/api.js";
import { createFilesystemTools } from "../src/tools/filesystem.js";
import { invokeTool } from "../src/tools/types.js";

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const rnd = (alphabet: string, n: number, seed: number) =>
  Array.from({ length: n }, (_, i) => alphabet[(seed * 7919 + i * 104729 + i * i * 31) % alphabet.length]).join("");
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const HEX = "0123456789abcdef";

describe("redaction (one redactor, in the core)", () => {
  // The formats that were stored verbatim before: [label, text, the secret].
  const cases: [string, string, string][] = [
    ["Slack app token", "xapp-1-A0123ABCDEF-1234567890123-", `${rnd(HEX, 64, 1)}`],
    ["webhook signing secret", "STRIPE hook whsec_", rnd(ALNUM, 32, 2)],
    ["Google OAuth client secret", "GOCSPX-", rnd(ALNUM, 28, 3)],
    ["Google access token", "ya29.", rnd(ALNUM, 60, 4)],
    ["npm token", "npm_", rnd(ALNUM, 36, 5)],
    ["SendGrid", "SG.", `${rnd(ALNUM, 22, 6)}.${rnd(ALNUM, 43, 7)}`],
    ["Azure AccountKey", "DefaultEndpointsProtocol=https;AccountKey=", `${rnd(ALNUM, 86, 8)}==`],
    ["Azure SAS sig", "https://a.blob.core.windows.net/c?sv=2022&sig=", rnd(ALNUM, 43, 9)],
    ["Telegram bot token", "bot 1234567890:AA", rnd(ALNUM, 33, 10)],
    ["DigitalOcean", "dop_v1_", rnd(HEX, 64, 11)],
    ["Vault", "hvs.", rnd(ALNUM, 90, 12)],
    ["Mailgun", "key-", rnd(ALNUM, 32, 13)],
    ["redis URL", "redis://:", `${rnd(ALNUM, 16, 14)}@cache:6379`],
    ["_KEY= env line", "STRIPE_KEY=", rnd(ALNUM, 24, 15)],
    ["_SECRET= env line", "SLACK_SIGNING_SECRET=", rnd(HEX, 32, 16)],
    ["_TOKEN= env line", "CI_DEPLOY_TOKEN=", rnd(ALNUM, 20, 17)],
    ["_PASSWORD= env line", "DB_PASSWORD=", "hunter2!x"],
    ["prose password", "my password is ", "hunter2"],
    ["prose passphrase", "the passphrase is ", "correct horse battery staple"],
  ];
  it.each(cases)("redacts %s", (_, prefix, secret) => {
    const text = `note: ${prefix}${secret} end`;
    const out = redactSecrets(text);
    const key = secret.replace(/@.*/, "").slice(-12);
    expect(out).not.toContain(key);
    expect(out).toContain(REDACTED);
    expect(redactSecrets(out)).toBe(out);
    expect(core.redactSecrets(text)).toEqual({ text: out, count: expect.any(Number) });
    expect(core.redactSecrets(text).count).toBeGreaterThanOrEqual(1);
  });

  it("keeps labels and counts what it replaced", () => {
    expect(core.redactSecrets("API key: sk-proj-AbCdEf0123456789xyzXYZ0123, password=hunter22")).toEqual({
      text: "API key: [REDACTED], password=[REDACTED]",
      count: 2,
    });
    expect(core.redactSecrets("The user prefers tabs.")).toEqual({ text: "The user prefers tabs.", count: 0 });
  });

  it("finds a secret behind an encoding and redacts it where it is written", () => {
    const key = `sk-proj-${rnd(ALNUM, 40, 20)}`;
    const hook = `hooks.slack.com/services/T${rnd(ALNUM, 8, 21)}/B${rnd(ALNUM, 8, 22)}/${rnd(ALNUM, 24, 23)}`;
    const cases: [string, string][] = [
      [JSON.stringify({ url: `https://${hook}` }).replaceAll("/", "\\/"), '{"url":"https:\\/\\/[REDACTED]"}'],
      [`see ${encodeURIComponent(`https://${hook}`)}&x=1`, "see https%3A%2F%2F[REDACTED]&x=1"],
      [`use ${key.replace("proj", "pro\u200bj")} now`, "use [REDACTED] now"],
      [`use ${key.replace(/[!-~]/g, (c) => String.fromCodePoint(c.codePointAt(0)! + 0xfee0))} now`, "use [REDACTED] now"],
      [`OpenAI: ${Buffer.from(key).toString("base64")}`, "OpenAI: [REDACTED]"],
    ];
    for (const [text, redacted] of cases) {
      expect(core.redactSecrets(text)).toEqual({ text: redacted, count: 1 });
    }
  });

  it("keeps a nested label, reads ';' as connection strings do, and reads longer prose", () => {
    expect(redactSecrets("credentials: password: Xk9mP2vQ7w")).toBe("credentials: password: [REDACTED]");
    expect(redactSecrets("Server=db;Password=abc;User Id=x")).toBe("Server=db;Password=[REDACTED];User Id=x");
    expect(redactSecrets("password=abc;XYZ")).toBe("password=[REDACTED]");
    expect(redactSecrets("the password for the staging database is Tr0ub4dor")).toBe("the password for the staging database is [REDACTED]");
    expect(redactSecrets(`AKIAZ3MX7QP2RT5WLK8N ${rnd(ALNUM, 40, 24)}`)).toBe("[REDACTED]");
    for (const code of ["password: string", "token = getToken()"]) {
      expect(redactSecrets(code)).toBe(code);
    }
  });

  it("is the same function on both cores and through the synchronous accessor", () => {
    expect(loadedCore().redactSecrets("token ghp_0123456789abcdefghijABCDEFGHIJ012345").text).toBe("token [REDACTED]");
  });

  it("refuses a non-string with invalid_argument", () => {
    expect(() => redactSecrets(42 as unknown as string)).toThrow(expect.objectContaining({ code: "invalid_argument" }));
    expect(() => core.redactSecrets(undefined as unknown as string)).toThrow(EngramError);
  });
});

describe("regex limits", () => {
  const alternation = Array.from({ length: 3000 }, (_, i) => `w${i}`).join("|");
  const hostile = [
    "[a-z]{20000}",
    "(a{100}){100}",
    "((a{10}){10}){10}",
    "\\w{1000}",
    "\\p{L}{500}",
    `${"(".repeat(200)}a${")".repeat(200)}`,
    alternation,
    "x".repeat(5000),
  ];
  it.each(hostile.map((p) => [p.slice(0, 40), p]))("refuses %j with invalid_pattern", (_, pattern) => {
    const t = core.createFileTable();
    t.write("/a.txt", "abc\n".repeat(1000));
    const r = t.grep({ pattern, regex: true });
    expect(r.error?.code).toBe("invalid_pattern");
    expect(r.error?.message.length).toBeLessThan(400);
  });

  it("still runs ordinary regexes", () => {
    const t = core.createFileTable();
    t.write("/a.txt", "id 3f2a9c0d\nnone\n");
    expect(t.grep({ pattern: "[0-9a-f]{8}", regex: true }).matches?.map((m) => m.line)).toEqual([1]);
    expect(t.grep({ pattern: "x".repeat(4096) }).error).toBeUndefined();
  });

  it("bounds glob patterns too", () => {
    const t = core.createFileTable();
    expect(t.glob({ pattern: `{${Array.from({ length: 2000 }, (_, i) => `a${i}`).join(",")}}` }).error?.code).toBe("invalid_pattern");
  });
});

describe("regex work budget (grep on the JS thread)", () => {
  /** 10 MB of `a`s and `b`s in lines of about 100: the text on which `a[ab]{20}c` makes the
   * lazy DFA thrash (about 2.5 s on the NFA before the budget). */
  function abText(bytes: number, seed: number): string {
    const r = prng(seed);
    const parts: string[] = [];
    let size = 0;
    while (size < bytes) {
      let line = "";
      for (let i = 0; i < 100; i++) line += r() < 0.5 ? "a" : "b";
      parts.push(line);
      size += 101;
    }
    return `${parts.join("\n")}\n`;
  }
  let big: string;
  beforeAll(() => {
    big = abText(10 << 20, 7);
  });

  const hostile = ["a[ab]{20}c", "(a|b)*a[ab]{19}c", "[ab]{8}a[ab]{16}c", "(?i)A[AB]{20}C"];
  it.each(hostile)("stops %j on 10 MB with pattern_too_expensive", (pattern) => {
    const t = core.createFileTable();
    t.write("/big.txt", big);
    for (const outputMode of ["content", "files_with_matches", "count"] as const) {
      const r = t.grep({ pattern, regex: true, outputMode });
      expect(r.error?.code).toBe("pattern_too_expensive");
      expect(r.error?.message).toContain("simpler pattern");
    }
    t.dispose();
  });

  it("bounds a search over many files as a whole", () => {
    const t = core.createFileTable();
    for (let i = 0; i < 100; i++) t.write(`/d/f${i}.txt`, abText(100_000, i + 1));
    expect(t.grep({ pattern: "a[ab]{20}c", regex: true }).error?.code).toBe("pattern_too_expensive");
    t.dispose();
  });

  it("reaches the model as an error result, and the backend stays usable", async () => {
    const backend = new StateBackend({ core });
    await backend.write("/big.txt", big);
    expect((await backend.grep("a[ab]{20}c", { regex: true })).error?.code).toBe("pattern_too_expensive");
    const grep = createFilesystemTools({ backend, core }).find((t) => t.name === "grep");
    const out = await invokeTool(grep as NonNullable<typeof grep>, { pattern: "a[ab]{20}c", regex: true, output_mode: "content" });
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/^Error: Pattern too expensive: 'a\[ab\]\{20\}c'.*simpler pattern/);
    expect((await backend.grep("a{3}b{3}a", { regex: true, outputMode: "count" })).counts?.["/big.txt"]).toBeGreaterThan(0);
  });

  it("answers the same patterns on small text, and ordinary ones on 10 MB", () => {
    const t = core.createFileTable();
    t.write("/small.txt", `${abText(2_000, 3)}x a${"ab".repeat(10)}c y\n`);
    expect(t.grep({ pattern: "a[ab]{20}c", regex: true }).matches?.map((m) => m.text)).toEqual([`x a${"ab".repeat(10)}c y`]);
    t.write("/big.txt", `${big}the end: fn main(\n`);
    for (const [pattern, regex, ignoreCase] of [
      ["fn\\s+\\w+\\(", true, false],
      ["\\bEND\\b", true, true],
      ["abba", false, false],
      ["ABBA", false, true],
      ["\\w+", true, false],
    ] as const) {
      const r = t.grep({ pattern, regex, ignoreCase, outputMode: "count" });
      expect(r.error, pattern).toBeUndefined();
    }
    expect(t.grep({ pattern: "fn\\s+\\w+\\(", regex: true }).matches?.map((m) => m.path)).toEqual(["/big.txt"]);
    t.dispose();
  });
});

describe("paths", () => {
  it("refuses a 4 KB path and one of more than 256 components with invalid_path", () => {
    expect(core.normalizePath(`/${"a".repeat(4095)}`).error?.code).toBe("invalid_path");
    expect(core.normalizePath("/a".repeat(257)).error?.code).toBe("invalid_path");
    expect(core.normalizePath("/a".repeat(256)).error).toBeUndefined();
    const t = core.createFileTable();
    expect(t.write("/b".repeat(300), "x").error?.code).toBe("invalid_path");
  });

  it("refuses lone surrogates instead of letting two names collide", () => {
    const t = core.createFileTable();
    const a = "/file\uD800.txt";
    const b = "/file\uDBFF.txt";
    expect(t.write(a, "one").error?.code).toBe("invalid_path");
    expect(t.write(b, "two").error?.code).toBe("invalid_path");
    expect(t.size).toBe(0);
    for (const r of [
      t.read(a),
      t.ls(a),
      t.stat(a),
      t.delete(a),
      core.normalizePath(a),
      t.edit({ path: a, oldString: "x", newString: "y" }),
    ]) {
      expect(r.error?.code).toBe("invalid_path");
    }
    expect(t.grep({ pattern: "x", path: a }).error?.code).toBe("invalid_path");
    expect(t.grep({ pattern: "x\uDC00" }).error?.code).toBe("invalid_pattern");
    expect(t.readBytes(a)).toBeUndefined();
    expect(core.createRouter(["/m"]).route(a).error?.code).toBe("invalid_path");
    // A well-formed astral name is fine.
    expect(t.write("/😀.txt", "ok").error).toBeUndefined();
  });
});

describe("the binding boundary", () => {
  const bad: [string, () => unknown][] = [
    ["normalizePath(123)", () => core.normalizePath(123 as unknown as string)],
    ["normalizePath()", () => (core.normalizePath as (p?: string) => unknown)()],
    ["formatNumbered(null, 1)", () => core.formatNumbered(null as unknown as string, 1)],
    ["rankBm25(q, 'x')", () => core.rankBm25("q", "x" as unknown as string[])],
    ["rankBm25(q, [1])", () => core.rankBm25("q", [1] as unknown as string[])],
    ["createRouter('x')", () => core.createRouter("x" as unknown as string[])],
    ["restoreFileTable('x')", () => core.restoreFileTable("x" as unknown as Uint8Array)],
    ["write(1, 'x')", () => core.createFileTable().write(1 as unknown as string, "x")],
    ["write('/a', 123)", () => core.createFileTable().write("/a", 123 as unknown as string)],
    ["read('/a', { limit: 'x' })", () => core.createFileTable().read("/a", { limit: "x" as unknown as number })],
    ["grep(undefined)", () => core.createFileTable().grep(undefined as unknown as { pattern: string })],
    ["grep({ pattern: 5 })", () => core.createFileTable().grep({ pattern: 5 as unknown as string })],
    [
      "edit({ path: '/a' })",
      () => core.createFileTable().edit({ path: "/a" } as unknown as { path: string; oldString: string; newString: string }),
    ],
    ["errorData(1, 's')", () => core.errorData(1 as unknown as "conflict", "s")],
  ];
  it.each(bad)("%s throws EngramError invalid_argument", (_, call) => {
    let caught: unknown;
    try {
      call();
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(EngramError);
    expect(caught).toMatchObject({ code: "invalid_argument" });
    expect((caught as Error).message).not.toMatch(/Failed to convert|napi|wasm-bindgen|expected a string/i);
  });
});

describe("clamped limits", () => {
  it("grep never returns more than 10,000 matches, whatever maxCount says", () => {
    const t = core.createFileTable();
    t.write("/big.txt", "hit\n".repeat(30_000));
    const r = t.grep({ pattern: "hit", maxCount: Number.MAX_SAFE_INTEGER, context: 1e9 });
    expect([r.matches?.length, r.truncated]).toEqual([10_000, true]);
  });

  it("reads are limited in lines and bytes", () => {
    const t = core.createFileTable();
    t.write("/lines.txt", "x\n".repeat(100_010));
    const r = t.read("/lines.txt", { limit: 1e12 });
    expect([r.lines, r.totalLines]).toEqual([100_000, 100_010]);
    t.write("/wide.txt", "a".repeat((10 << 20) + 1));
    expect(t.read("/wide.txt").error?.code).toBe("too_large");
  });
});

describe("truncation keeps characters whole", () => {
  it("never cuts between the halves of a surrogate pair", () => {
    const text = "ab😀cd";
    for (let n = 0; n <= text.length; n++) {
      const cut = cutAt(text, n);
      expect(cut.length).toBeLessThanOrEqual(n);
      expect(() => encodeURIComponent(cut)).not.toThrow(); // throws on a lone surrogate
    }
    expect(cutAt(text, 3)).toBe("ab");
  });
});
