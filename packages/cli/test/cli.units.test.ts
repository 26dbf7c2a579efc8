/** The pure parts of the command: colour decisions, the exit code of every stop reason, what a
 * project file may configure, and the credentials printed masked. */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, ModelError } from "engram";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FlagValues, describeConfig, loadConfig } from "../src/config.js";
import { EXIT, describeError, exitCodeFor } from "../src/exit.js";
import { maskApiKey, maskUrlCredentials } from "../src/masking.js";
import { colorsFor } from "../src/terminal.js";
import { threadIdProblem } from "../src/threads-id.js";
import { tempDir } from "./helpers.js";

describe("colours", () => {
  const tty = { write: () => true, isTTY: true };
  const pipe = { write: () => true, isTTY: false };
  it("are on for a terminal, off for NO_COLOR, --no-color, TERM=dumb and pipes", () => {
    expect(colorsFor(tty, { env: {} }).isColorSupported).toBe(true);
    expect(colorsFor(tty, { env: {} }).red("x")).not.toBe("x");
    expect(colorsFor(tty, { env: { NO_COLOR: "1" } }).red("x")).toBe("x");
    expect(colorsFor(tty, { env: {}, color: false }).red("x")).toBe("x");
    expect(colorsFor(tty, { env: { TERM: "dumb" } }).red("x")).toBe("x");
    expect(colorsFor(pipe, { env: {} }).red("x")).toBe("x");
  });
});

describe("exit codes", () => {
  it("differ for every way a run ends", () => {
    const reasons = ["done", "max_turns", "max_model_calls", "interrupted", "truncated", "cancelled", "error"] as const;
    const codes = reasons.map(exitCodeFor);
    expect(codes).toEqual([0, 3, 4, 5, 6, 130, 1]);
    expect(new Set([...codes, EXIT.usage]).size).toBe(reasons.length + 1);
  });
});

describe("a project file (comes with the repository) may only narrow", () => {
  let home: ReturnType<typeof tempDir>;
  let cwd: ReturnType<typeof tempDir>;
  beforeEach(() => {
    home = tempDir("engram-units-home-");
    cwd = tempDir("engram-units-cwd-");
  });
  afterEach(() => {
    home.remove();
    cwd.remove();
  });
  const projectFile = () => join(cwd.path, "engram.config.json");
  const userFile = () => join(home.path, "config.json");
  const load = (project: Record<string, unknown>, flags: FlagValues = {}, env: NodeJS.ProcessEnv = {}) => {
    writeFileSync(projectFile(), JSON.stringify(project));
    return loadConfig(flags, { env: { ENGRAM_HOME: home.path, ...env }, cwd: cwd.path, osUser: "ada" });
  };
  const refusal = (project: Record<string, unknown>): ConfigError => {
    try {
      load(project);
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return e as ConfigError;
    }
    throw new Error(`${JSON.stringify(project)} was accepted`);
  };

  it("refuses write: true and a root outside the project (the whole disk), naming the key, the file and where to set it", () => {
    const write = refusal({ root: ".", write: true });
    expect(write.option).toBe("write");
    expect(write.message).toContain(projectFile());
    expect(write.message).toMatch(/--write, ENGRAM_WRITE or in your own .*config\.json/);
    expect(write.message).toContain(userFile());
    for (const root of ["/", "..", "../elsewhere", home.path]) {
      const e = refusal({ root });
      expect(e.option, root).toBe("root");
      expect(e.message).toContain("outside the project directory");
      expect(e.message).toMatch(/--root, ENGRAM_ROOT or in your own/);
    }
  });

  it("refuses a root inside the project that is a symbolic link out of it", () => {
    symlinkSync("/", join(cwd.path, "disk"));
    expect(refusal({ root: "disk" }).option).toBe("root");
    expect(refusal({ root: "disk/not-yet" }).option).toBe("root");
    mkdirSync(join(cwd.path, "src"));
    symlinkSync(join(cwd.path, "src"), join(cwd.path, "inside"));
    expect(load({ root: "inside" }).config.root).toBe(join(cwd.path, "inside"));
  });

  it("refuses the keys that choose where data goes or whose it is: model, baseUrl, apiKey, user, database, history retention", () => {
    const cases: [string, unknown, RegExp][] = [
      ["model", "openai-compatible:m@http://evil.example/v1", /--model, ENGRAM_MODEL/],
      ["baseUrl", "http://evil.example/v1", /--base-url, ENGRAM_BASE_URL/],
      ["apiKey", "sk-attacker", /ENGRAM_API_KEY/],
      ["user", "someone-else", /--user, ENGRAM_USER/],
      ["database", "/tmp/elsewhere.db", /--database, ENGRAM_DATABASE/],
      ["historyMaxChanges", 1, /ENGRAM_HISTORY_MAX_CHANGES/],
      ["historyMaxAgeDays", 1, /ENGRAM_HISTORY_MAX_AGE_DAYS/],
    ];
    for (const [key, value, how] of cases) {
      const e = refusal({ [key]: value });
      expect(e.option, key).toBe(key);
      expect(e.message).toMatch(/^\w+: not allowed in a project file/);
      expect(e.message).toContain(projectFile());
      expect(e.message).toMatch(how);
    }
  });

  it("refuses turning long-term memory or thread recall on and raising maxTurns above the value it overrides", () => {
    expect(refusal({ longTermMemory: true }).option).toBe("longTermMemory");
    expect(refusal({ threadRecall: true }).option).toBe("threadRecall");
    expect(load({ threadRecall: false }).config.threadRecall).toBe(false);
    expect(load({}, {}, { ENGRAM_THREAD_RECALL: "false" }).config.threadRecall).toBe(false);
    expect(load({}).config.threadRecall).toBe(true);
    expect(refusal({ maxTurns: 101 }).message).toMatch(/at most 100/);
    writeFileSync(userFile(), JSON.stringify({ maxTurns: 20 }));
    expect(refusal({ maxTurns: 21 }).message).toMatch(/at most 20/);
    expect(load({ maxTurns: 5 }).config.maxTurns).toBe(5);
  });

  it("adds its reviews to the user file's, never removes them", () => {
    writeFileSync(userFile(), JSON.stringify({ review: ["write_file", "execute"] }));
    expect(load({ review: [] }).config.review).toEqual(["write_file", "execute"]);
    const added = load({ review: ["edit_file", "write_file"] });
    expect(added.config.review).toEqual(["write_file", "execute", "edit_file"]);
    expect(added.sources.review).toBe(`file ${projectFile()}`);
    // The user's own --review / ENGRAM_REVIEW still decide.
    expect(load({ review: ["edit_file"] }, { review: "" }).config.review).toEqual([]);
    expect(load({ review: ["edit_file"] }, {}, { ENGRAM_REVIEW: "execute" }).config.review).toEqual(["execute"]);
  });

  it("keeps what narrows or describes the project; flags, variables and the user file set anything", () => {
    const narrow = load({ root: "src", write: false, longTermMemory: false, maxTurns: 10, temperature: 0.3, maxOutputTokens: 500 });
    expect(narrow.config).toMatchObject({
      root: join(cwd.path, "src"),
      write: false,
      longTermMemory: false,
      maxTurns: 10,
      temperature: 0.3,
    });
    expect(load({ root: "." }).config.root).toBe(cwd.path);
    // .engram/config.json is a project file too.
    rmSync(projectFile());
    mkdirSync(join(cwd.path, ".engram"));
    writeFileSync(join(cwd.path, ".engram", "config.json"), JSON.stringify({ root: "/" }));
    expect(() => loadConfig({}, { env: { ENGRAM_HOME: home.path }, cwd: cwd.path })).toThrow(/root: "\/" is not allowed in a project file/);

    writeFileSync(projectFile(), "{}");
    writeFileSync(userFile(), JSON.stringify({ root: "/", write: true, model: "openai:gpt-4.1", user: "ada", historyMaxChanges: 5 }));
    const user = loadConfig({}, { env: { ENGRAM_HOME: home.path }, cwd: cwd.path });
    expect(user.config).toMatchObject({ root: "/", write: true, model: "openai:gpt-4.1", user: "ada", historyMaxChanges: 5 });
    const trusted = loadConfig(
      { baseUrl: "http://127.0.0.1:1/v1", database: join(home.path, "x.db") },
      { env: { ENGRAM_HOME: home.path, ENGRAM_API_KEY: "k", ENGRAM_WRITE: "1" }, cwd: cwd.path },
    );
    expect(trusted.config).toMatchObject({ baseUrl: "http://127.0.0.1:1/v1", apiKey: "k", write: true });
  });
});

describe("credentials are printed masked", () => {
  it("the password of a URL, a token used as a user name", () => {
    expect(maskUrlCredentials("http://user:pass@host/v1")).toBe("http://user:***@host/v1");
    expect(maskUrlCredentials("https://TOKEN@host:8080/v1")).toBe("https://***@host:8080/v1");
    expect(maskUrlCredentials("https://u:p@ss@host/v1?q=a@b")).toBe("https://u:***@host/v1?q=a@b");
    expect(maskUrlCredentials("openai-compatible:m@http://u:secret@h/v1")).toBe("openai-compatible:m@http://u:***@h/v1");
    expect(maskUrlCredentials("http://host/v1 and mail a@b.c")).toBe("http://host/v1 and mail a@b.c");
  });

  it("engram config rows: baseUrl and a model string's server without their password, the API key never in full", () => {
    const home = tempDir("engram-units-home-");
    try {
      const loaded = loadConfig(
        { baseUrl: "http://user:hunter2@127.0.0.1:8080/v1", model: "openai-compatible:m" },
        { env: { ENGRAM_HOME: home.path, ENGRAM_API_KEY: "abc" }, cwd: home.path },
      );
      const rows = Object.fromEntries(describeConfig(loaded).map((r) => [r.key, r.value]));
      expect(rows.baseUrl).toBe("http://user:***@127.0.0.1:8080/v1");
      expect(rows.apiKey).toBe("***(3 chars)");
      expect(JSON.stringify(rows)).not.toContain("hunter2");
      expect(maskApiKey("sk-proj-abcdefghijklmnop")).toBe("sk-…(24 chars)");
    } finally {
      home.remove();
    }
  });

  it("an error naming a URL (a failed request) shows it without the password", () => {
    const e = new ModelError("network", "Request to http://user:hunter2@127.0.0.1:9/v1/chat/completions failed: refused");
    expect(describeError(e)).toBe("network: Request to http://user:***@127.0.0.1:9/v1/chat/completions failed: refused");
    expect(describeError(new TypeError("bad http://a:b@c/"))).toBe("bad http://a:***@c/");
  });
});

describe("names that store namespaces cannot hold are usage errors", () => {
  it("a --user or ENGRAM_USER such a name fails at configuration, naming where it came from", () => {
    const home = tempDir("engram-user-");
    const env = { ENGRAM_HOME: home.path };
    for (const [flags, extra, from] of [
      [{ user: "a/b" }, {}, "(flag)"],
      [{}, { ENGRAM_USER: "with space" }, "(env ENGRAM_USER)"],
    ] as const) {
      let thrown: unknown;
      try {
        loadConfig(flags as FlagValues, { env: { ...env, ...extra }, cwd: home.path });
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(ConfigError);
      expect((thrown as ConfigError).option).toBe("user");
      expect((thrown as Error).message).toContain(from);
    }
    expect(loadConfig({ user: "alice@example.com" }, { env, cwd: home.path }).config.user).toBe("alice@example.com");
    home.remove();
  });

  it("a --thread such a name is refused before anything is opened", () => {
    expect(threadIdProblem("a/b", "tester")).toMatch(/^--thread: invalid namespace component "a\/b"/);
    expect(threadIdProblem("x".repeat(200), "tester")).toMatch(/^--thread: /);
    expect(threadIdProblem("t-20260101-120000-a1b2c3", "tester")).toBeUndefined();
    expect(threadIdProblem(undefined, "tester")).toBeUndefined();
  });
});
