/**
 * What the agent may do without asking, and never: the `engram` command's modes and the user's
 * allow/deny rules.
 *
 * **Modes** (`--mode`, narrowest first): `plan` offers no tool that writes or runs a command;
 * `ask` (the default) reviews the tools the configuration names, and every `execute`; `auto-edit`
 * lets the agent write files unreviewed and reviews `execute`; `auto` reviews nothing (every
 * command still runs in the sandbox).
 *
 * **Rules** (`permissions: { allow, deny }` in the configuration): `tool` or `tool(pattern)`.
 * A pattern is matched against the whole command of an `execute` call, or the path a file tool
 * names; `*` matches any characters (`/` and spaces included), `?` one. A command matches a deny
 * rule when the whole of it or any one of its simple commands (split at `;`, `&&`, `||`, `|`,
 * `&`, newlines, `$(`, backquotes) does, and an allow rule only when every one of them does.
 * A denied call is answered to the model as denied and never runs, in every mode; an allowed
 * call needs no review. Deny wins over allow.
 * @module
 */
import { posix } from "node:path";
import type { Decision, InterruptConfig, InterruptedCall, Middleware, ToolCall, ToolResult } from "engram";

/** The modes, narrowest first. */
export const MODES = ["plan", "ask", "auto-edit", "auto"] as const;
export type Mode = (typeof MODES)[number];

/** The tools that change files. */
export const FILE_WRITE_TOOLS = ["write_file", "edit_file", "delete"] as const;
/** The tool that runs commands. */
export const EXECUTE_TOOL = "execute";

/** `tool` or `tool(pattern)`. */
export const RULE_SYNTAX = /^([A-Za-z0-9_-]{1,64})(?:\((.+)\))?$/s;

/** The rules of the configuration (`permissions`). */
export interface PermissionRules {
  allow?: string[];
  deny?: string[];
}

interface Rule {
  text: string;
  tool: string;
  /** Absent: every call of the tool. */
  pattern?: RegExp;
}

/** How a rule judged a call. */
export type Verdict = { kind: "deny" | "allow"; rule: string };

function globRegExp(glob: string): RegExp {
  let source = "";
  for (const ch of glob) source += ch === "*" ? ".*" : ch === "?" ? "." : ch.replace(/[\\^$.+()[\]{}|]/g, "\\$&");
  return new RegExp(`^${source}$`, "s");
}

function parseRule(text: string): Rule {
  const m = RULE_SYNTAX.exec(text.trim());
  if (!m) throw new Error(`${JSON.stringify(text)} is not a rule (tool or tool(pattern))`);
  const [, tool, pattern] = m as unknown as [string, string, string | undefined];
  return { text: text.trim(), tool, ...(pattern !== undefined && { pattern: globRegExp(pattern) }) };
}

/** Words that start a simple command without being its program (`if rm …`, `sudo rm …`). */
const LEADING_WORDS = /^(?:[{}!]\s*|(?:if|then|else|elif|do|while|until|time|exec|command|env|nohup|sudo)\s+)+/;

/** The simple commands of a shell command: a rough split, so that a deny rule is not dodged by
 * `true; rm …` (it is no parser: the sandbox is the boundary, rules are the user's wishes). */
export function simpleCommands(command: string): string[] {
  return command
    .split(/&&|\|\||[;|&\n`()]/)
    .map((part) =>
      part
        .trim()
        .replace(LEADING_WORDS, "")
        .replace(/\s*\}$/, ""),
    )
    .filter((part) => part !== "");
}

/** What a rule's pattern is matched against: the command of `execute`, else the path named. */
function subject(call: { name: string; args: Record<string, unknown> }): string | undefined {
  const { args } = call;
  if (call.name === EXECUTE_TOOL) return typeof args.command === "string" ? args.command.trim() : undefined;
  const path = typeof args.file_path === "string" ? args.file_path : typeof args.path === "string" ? args.path : undefined;
  if (path === undefined) return undefined;
  const normal = posix.normalize(`/${path}`);
  return normal.length > 1 ? normal.replace(/\/$/, "") : normal;
}

/** The allow and deny rules, parsed once. */
export class Permissions {
  readonly #allow: Rule[];
  readonly #deny: Rule[];

  /** Throws on a rule that does not parse (the configuration validates them first). */
  constructor(rules: PermissionRules = {}) {
    this.#allow = (rules.allow ?? []).map(parseRule);
    this.#deny = (rules.deny ?? []).map(parseRule);
  }

  /** The verdict of the rules on a call: deny first, then allow; `undefined` when none applies. */
  judge(call: { name: string; args: Record<string, unknown> }): Verdict | undefined {
    const target = subject(call);
    const parts = call.name === EXECUTE_TOOL && target !== undefined ? [target, ...simpleCommands(target)] : [target];
    const matches = (rule: Rule, text: string | undefined) =>
      rule.tool === call.name && (rule.pattern === undefined || (text !== undefined && rule.pattern.test(text)));
    const denied = this.#deny.find((rule) => parts.some((part) => matches(rule, part)));
    if (denied) return { kind: "deny", rule: denied.text };
    const rules = this.#allow.filter((rule) => rule.tool === call.name);
    const bare = rules.find((rule) => rule.pattern === undefined);
    if (bare) return { kind: "allow", rule: bare.text };
    // A command is allowed only when each of its simple commands is.
    const each = (call.name === EXECUTE_TOOL && target !== undefined ? simpleCommands(target) : [target]).map((part) =>
      rules.find((rule) => matches(rule, part)),
    );
    if (each.length > 0 && each.every(Boolean)) return { kind: "allow", rule: [...new Set(each.map((r) => r?.text))].join(", ") };
    return undefined;
  }

  /** The decision the rules take on a reviewed call, or `undefined` when a human must. */
  decide(call: InterruptedCall): Decision | undefined {
    const verdict = this.judge(call);
    if (verdict?.kind === "deny") return { type: "reject", message: `denied by your permissions (${verdict.rule})` };
    if (verdict?.kind === "allow" && call.allow.includes("approve")) return { type: "approve" };
    return undefined;
  }
}

/** The answer a denied call gets instead of running. */
export function deniedResult(call: ToolCall, why: string): ToolResult {
  return { content: `Denied: this ${call.name} call was not run (${why}). Do not retry it.`, isError: true };
}

/** What a mode lets the agent do, given whether there is a root. */
export interface ModePolicy {
  /** The backend gets `execute` (and the agent the tool); its commands may change the root only
   * where the agent may write. */
  execute: boolean;
  /** Tools the model is not offered (and whose calls are denied). */
  hidden: string[];
  /** Reviews, by tool. */
  interruptOn: Record<string, InterruptConfig>;
}

/** The policy of `mode`: `reviewed` is the configuration's list of reviewed tools (expanded). */
export function modePolicy(mode: Mode, reviewed: string[], options: { root: boolean }): ModePolicy {
  const execute = mode !== "plan" && options.root;
  // `execute` is reviewed only where it exists (a call of a tool that does not is answered so).
  const review = (tools: string[]) =>
    Object.fromEntries([...new Set([...tools, ...(execute ? [EXECUTE_TOOL] : [])])].map((tool) => [tool, true as InterruptConfig]));
  const files: readonly string[] = FILE_WRITE_TOOLS;
  switch (mode) {
    case "plan":
      return { execute: false, hidden: [...files, EXECUTE_TOOL], interruptOn: review(reviewed.filter((tool) => !files.includes(tool))) };
    case "ask":
      return { execute, hidden: [], interruptOn: review(reviewed) };
    case "auto-edit":
      return { execute, hidden: [], interruptOn: review(reviewed.filter((tool) => !files.includes(tool))) };
    case "auto":
      return { execute, hidden: [], interruptOn: {} };
  }
}

/** Enforces the rules and the mode's hidden tools on every call (subagents' too): denied calls
 * are answered as denied and never run; hidden tools are not offered to the model. */
export function permissionsMiddleware(permissions: Permissions, hidden: readonly string[], mode: Mode): Middleware {
  return {
    name: "permissions",
    beforeModel(request) {
      if (hidden.length === 0) return undefined;
      return { ...request, tools: request.tools.filter((tool) => !hidden.includes(tool.name)) };
    },
    async wrapToolCall(call, next) {
      if (hidden.includes(call.name)) return deniedResult(call, `${mode} mode offers no ${call.name}`);
      const verdict = permissions.judge(call);
      if (verdict?.kind === "deny") return deniedResult(call, `denied by your permissions: ${verdict.rule}`);
      return next(call);
    },
  };
}
