/**
 * The README's main job, offline: the `engram` command end to end, with no key and no download.
 *
 * A scripted model answers over a real OpenAI-compatible HTTP server on 127.0.0.1 (random port).
 * Storage is the SQLite file in a temporary ENGRAM_HOME; the agent sees a sandboxed project
 * directory. Two separate `engram run` processes: the first learns an AGENTS.md note (the model
 * writes it with a tool) and a long-term fact (extracted after the run); the second is answered
 * from both — and its request to the model visibly contains them.
 *
 * Run it with `npm run demo` (which runs scripts/setup.sh first).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type Script,
  type WireRequest,
  afterToolResult,
  isMemoryExtraction,
  lastUserText,
  memoryUpdate,
  startScriptedModelServer,
  systemText,
} from "./scripted-model-server.js";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const built = join(repo, "packages/cli/dist/bin.js");
// The built command (scripts/setup.sh builds it); from sources when it is not built.
const engramArgv = existsSync(built) ? [built] : [join(repo, "node_modules/tsx/dist/cli.mjs"), join(repo, "packages/cli/src/bin.ts")];

const NOTE = "Tests run with `npm test`; never push on red.";
const FACT = "Deploys with Kamal on Fridays";

/** The scripted model: what a capable model would do with these requests. */
const script: Script = (req: WireRequest) => {
  if (isMemoryExtraction(req)) {
    // The long-term memory update after each run: the fact the user stated in the first one.
    const said = req.messages.map((m) => m.content ?? "").join("\n");
    return { text: memoryUpdate(said.includes("Kamal on Fridays") && !said.includes(FACT) ? [{ content: FACT }] : []) };
  }
  const user = lastUserText(req);
  if (user.startsWith("Remember")) {
    if (afterToolResult(req)) return { text: "Noted: the rule is in /memories/AGENTS.md, and I will remember how you deploy." };
    return {
      text: "I'll keep that in my memory file.",
      toolCalls: [{ name: "write_file", args: { file_path: "/memories/AGENTS.md", content: `# Memory\n- ${NOTE}\n` } }],
    };
  }
  // The second run: answer only from what the request carries.
  const system = systemText(req);
  const note = system.includes(NOTE) ? NOTE : "(no note)";
  const fact = system.includes(FACT) ? FACT.replace("Deploys", "you deploy") : "(no fact)";
  return { text: `From memory: ${note} And ${fact}.` };
};

const c = { bold: (s: string) => `\x1b[1m${s}\x1b[0m`, dim: (s: string) => `\x1b[2m${s}\x1b[0m` };
const useColor = process.stdout.isTTY && !process.env.NO_COLOR;
const bold = useColor ? c.bold : (s: string) => s;
const dim = useColor ? c.dim : (s: string) => s;

const home = mkdtempSync(join(tmpdir(), "engram-demo-home-"));
const project = mkdtempSync(join(tmpdir(), "engram-demo-project-"));
writeFileSync(join(project, "README.md"), "# shop\nA small web shop.\n");
const server = await startScriptedModelServer(script);
const env = { ...process.env, ENGRAM_HOME: home, ENGRAM_USER: "ada", NO_COLOR: "1" };
let failed = false;

/** Runs the command as its own process (asynchronously: the model server lives in this one). */
async function engram(args: string[], show: string): Promise<number> {
  console.log(`\n${bold(`$ engram ${show}`)}`);
  const child = spawn(process.execPath, [...engramArgv, ...args], { env, stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 });
  let out = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString("utf8");
  });
  child.stderr.on("data", (d: Buffer) => {
    out += d.toString("utf8");
  });
  const [status, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((r) =>
    child.on("close", (code, sig) => r([code, sig])),
  );
  console.log(out.trimEnd().replace(/^/gm, "  "));
  if (status !== 0) {
    console.log(`  → exit ${status}${signal ? ` (${signal})` : ""}`);
    failed = true;
  }
  return status ?? -1;
}

try {
  const common = ["--base-url", server.baseURL, "--model", "openai-compatible:scripted", "--root", project];
  console.log(bold("Engram demo: the engram command, offline"));
  console.log(dim(`model server ${server.baseURL} (scripted) · ENGRAM_HOME ${home} · project ${project}`));

  const first = "Remember: in this project tests run with npm test and we never push on red. Also, I deploy with Kamal on Fridays.";
  await engram([...common, "--write", "run", first], `run --root <project> --write "${first}"`);
  const firstRequests = server.requests.length;

  await engram(["memory", "facts"], "memory facts");

  const second = "How do we test and ship here?";
  await engram([...common, "run", second], `run --root <project> "${second}"`);

  // What the second process sent to the model: its first chat request's system context.
  const request = server.requests.slice(firstRequests).find((r) => !isMemoryExtraction(r));
  const system = request ? systemText(request) : "";
  const carried = system
    .split("\n")
    .filter((l) => l.includes(NOTE) || l.includes(FACT))
    .map((l) => l.trim());
  console.log(`\n${bold("The second process's request to the model carried:")}`);
  for (const line of carried) console.log(`  ${line}`);
  if (!system.includes(NOTE) || !system.includes(FACT)) {
    console.log("  → the note or the fact is missing");
    failed = true;
  }
  await engram(["threads", "list"], "threads list");
  console.log(
    `\n${failed ? "demo FAILED" : "demo passed"}: ${server.requests.length} model requests over HTTP, storage in ${join(home, "engram.db")}`,
  );
} finally {
  await server.close();
  rmSync(home, { recursive: true, force: true });
  rmSync(project, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
