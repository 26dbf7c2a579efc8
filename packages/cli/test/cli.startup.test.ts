/** What `engram` loads before it answers: --help and --version need commander only. */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { SOURCE_ARGV, cleanEnv, tempDir } from "./helpers.js";

const dir = tempDir("engram-cli-startup-");
afterAll(() => dir.remove());

// A module hook that reports every module URL the process resolves, on stderr.
const hook = join(dir.path, "hook.mjs");
writeFileSync(
  hook,
  'import { writeSync } from "node:fs";\n' +
    "export async function resolve(specifier, context, next) {\n" +
    "  const r = await next(specifier, context);\n" +
    '  writeSync(2, "resolved " + r.url + "\\n");\n' +
    "  return r;\n" +
    "}\n",
);
const register = join(dir.path, "register.mjs");
writeFileSync(register, `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hook).href)});\n`);

/** The module URLs `engram <args>` resolved, and its stdout. */
function resolvedBy(args: string[]): { urls: string[]; stdout: string } {
  const [cmd, ...pre] = SOURCE_ARGV as [string, ...string[]];
  const r = spawnSync(cmd, [...pre, ...args], {
    env: cleanEnv({ NODE_OPTIONS: `--import ${pathToFileURL(register).href}`, ENGRAM_HOME: join(dir.path, "home") }),
    cwd: dir.path,
    encoding: "utf8",
    timeout: 30_000,
  });
  return { urls: [...r.stderr.matchAll(/^resolved (.*)$/gm)].map((m) => m[1] as string), stdout: r.stdout };
}

const library = (url: string) => /\/packages\/(engram|store-sqlite|store-postgres)\//.test(url) || /node_modules\/(engram|zod)\//.test(url);

describe("engram startup", () => {
  it("answers --version and --help without loading the library; a command loads it", () => {
    const version = resolvedBy(["--version"]);
    expect(version.stdout.trim()).toBe("0.1.0");
    expect(version.urls.some((u) => u.includes("commander"))).toBe(true);
    expect(version.urls.filter(library)).toEqual([]);
    const help = resolvedBy(["--help"]);
    expect(help.stdout).toContain("Usage: engram");
    expect(help.urls.filter(library)).toEqual([]);
    // The detector sees the library when a command runs.
    const config = resolvedBy(["config", "--json"]);
    expect(config.urls.filter(library).length).toBeGreaterThan(0);
  }, 60_000);
});
