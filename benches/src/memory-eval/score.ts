/**
 * The memory evaluation's cases and how an answer is scored, without a judge model: regular
 * expressions that must (all of / any of) and must not (none of) match, and for abstention cases
 * a refusal phrase. Pure functions over data; the runner and the tests share them.
 * @module
 */

/** The categories of the evaluation, in report order. */
export const CATEGORIES = ["single-session", "preference", "knowledge-update", "temporal", "multi-session", "abstention"] as const;
export type Category = (typeof CATEGORIES)[number];

/** How an answer is checked. Patterns are case-insensitive regular expressions. */
export interface Check {
  /** Every one must match. */
  allOf?: string[];
  /** At least one must match. */
  anyOf?: string[];
  /** None may match. */
  noneOf?: string[];
  /** The answer must say the memory does not hold it (see {@link REFUSALS}). */
  abstain?: boolean;
}

/** One chat session: the user's turns, sent at `at`. */
export interface Session {
  at: string;
  turns: string[];
}

/** One case of the evaluation. */
export interface EvalCase {
  id: string;
  category: Category;
  smoke: boolean;
  sessions: Session[];
  question: string;
  expected: string;
  check: Check;
  /** Patterns of an outdated value that must not be in the injected memory (knowledge updates). */
  superseded: string[];
}

/** The evaluation set as loaded. */
export interface EvalSet {
  askedAt: string;
  cases: EvalCase[];
}

/** A malformed evaluation file: says which case and field. */
export class EvalSetError extends Error {
  override name = "EvalSetError";
}

/**
 * Phrases by which an answer says it does not know. An abstention case passes when one matches
 * (and none of its `noneOf` does).
 */
export const REFUSALS: readonly RegExp[] = [
  /\b(?:do not|don't|dont|doesn't|does not) (?:know|have|recall|remember|seem to have)\b/i,
  /\b(?:I'm|I am) not (?:sure|aware|able to (?:find|tell|say|know))\b/i,
  /\bno (?:information|record|memory|mention|details?|data|knowledge)\b/i,
  /\b(?:haven't|have not|hasn't|has not|didn't|did not|never) (?:yet )?(?:told|mentioned|said|shared|provided|specified|stated|given|been (?:told|mentioned|shared|provided))\b/i,
  /\b(?:didn't|did not|never) (?:tell|mention|say|share|give)\b/i,
  /\bnot (?:been )?(?:mentioned|provided|specified|stated|shared|available|known|stored|recorded|in (?:my|the|our) (?:memory|records|conversations?))\b/i,
  /\bcan(?:not|'t|not) (?:find|tell|determine|know|recall|say|answer|access)\b/i,
  /\bunable to (?:find|tell|determine|know|recall|say|answer)\b/i,
  /\b(?:unknown|no way (?:for me )?to know)\b/i,
  /\bnot something (?:you(?:'ve| have)? (?:told|mentioned|shared|said)|I (?:know|have))\b/i,
];

/** Whether `answer` refuses (matches one of {@link REFUSALS}). */
export function isRefusal(answer: string): boolean {
  return REFUSALS.some((r) => r.test(answer));
}

/** The outcome of scoring one answer. */
export interface Score {
  pass: boolean;
  /** Why it failed (the first rule broken); `""` when it passed. */
  reason: string;
}

const pattern = (source: string) => new RegExp(source, "iu");

/** Scores `answer` against `check`. */
export function scoreAnswer(answer: string, check: Check): Score {
  const text = answer.trim();
  if (text === "") return { pass: false, reason: "empty answer" };
  for (const p of check.noneOf ?? []) if (pattern(p).test(text)) return { pass: false, reason: `says /${p}/` };
  if (check.abstain) return isRefusal(text) ? { pass: true, reason: "" } : { pass: false, reason: "does not say it does not know" };
  for (const p of check.allOf ?? []) if (!pattern(p).test(text)) return { pass: false, reason: `misses /${p}/` };
  const any = check.anyOf ?? [];
  if (any.length > 0 && !any.some((p) => pattern(p).test(text)))
    return { pass: false, reason: `none of ${any.map((p) => `/${p}/`).join(" ")}` };
  return { pass: true, reason: "" };
}

/** Words before a value by which a line says the user moved away from it: "switched editors
 * from Sublime Text to Zed", "no longer uses Vim", "instead of npm". */
const LEFT_BEHIND = /\b(?:from|instead of|no longer|rather than|replaced|gave up|quit|used to)\s+(?:[\p{L}\p{N}'’-]+\s+){0,2}$/iu;
/** A "from" counts only in a line that speaks of a change ("Works from Berlin" does not). */
const CHANGE = /\b(?:switch\w*|mov\w*|chang\w*|migrat\w*|upgrad\w*|replac\w*|no longer|instead|gave up|quit|left|used to)\b/iu;

/** The `superseded` patterns of a case that a line of `block` (the injected memory) states as
 * current: a line that speaks of a change and names the old value only as what the user moved
 * away from ("Switched editors from Sublime Text to Zed") does not count. */
export function supersededIn(block: string, superseded: readonly string[]): string[] {
  const lines = block.split("\n");
  return superseded.filter((p) => lines.some((line) => statesAsCurrent(line, new RegExp(pattern(p).source, "giu"))));
}

function statesAsCurrent(line: string, value: RegExp): boolean {
  const change = CHANGE.test(line);
  for (const m of line.matchAll(value)) if (!change || !LEFT_BEHIND.test(line.slice(0, m.index))) return true;
  return false;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isIso = (v: unknown): v is string => typeof v === "string" && /^\d{4}-\d\d-\d\dT/.test(v) && !Number.isNaN(Date.parse(v));

/** Validates a parsed evaluation file; throws {@link EvalSetError} naming the case and field. */
export function parseEvalSet(value: unknown): EvalSet {
  if (!isObject(value) || !Array.isArray(value.cases)) throw new EvalSetError("the evaluation file needs a `cases` array");
  if (!isIso(value.askedAt)) throw new EvalSetError("`askedAt` must be an ISO-8601 time");
  const askedAt = value.askedAt;
  const seen = new Set<string>();
  const cases = value.cases.map((raw, i): EvalCase => {
    const where = isObject(raw) && typeof raw.id === "string" ? `case ${JSON.stringify(raw.id)}` : `case #${i}`;
    const fail = (message: string): never => {
      throw new EvalSetError(`${where}: ${message}`);
    };
    if (!isObject(raw)) return fail("not an object");
    if (typeof raw.id !== "string" || !/^[a-z0-9-]+$/.test(raw.id)) fail("`id` must be lowercase letters, digits and dashes");
    if (seen.has(raw.id as string)) fail("duplicate id");
    seen.add(raw.id as string);
    if (!CATEGORIES.includes(raw.category as Category)) fail(`\`category\` must be one of ${CATEGORIES.join(", ")}`);
    if (!Array.isArray(raw.sessions) || raw.sessions.length === 0) fail("`sessions` must be a non-empty array");
    const sessions = (raw.sessions as unknown[]).map((s, j): Session => {
      if (!isObject(s) || !isIso(s.at)) return fail(`session ${j}: \`at\` must be an ISO-8601 time`);
      if (!Array.isArray(s.turns) || s.turns.length === 0 || !s.turns.every((t) => typeof t === "string" && t.trim() !== ""))
        return fail(`session ${j}: \`turns\` must be non-empty strings`);
      if (Date.parse(s.at) >= Date.parse(askedAt)) fail(`session ${j} is not before askedAt`);
      return { at: s.at, turns: s.turns as string[] };
    });
    for (const [field, v] of [
      ["question", raw.question],
      ["expected", raw.expected],
    ] as const)
      if (typeof v !== "string" || v.trim() === "") fail(`\`${field}\` must be a non-empty string`);
    if (!isObject(raw.check)) return fail("`check` must be an object");
    const check: Check = {};
    for (const key of ["allOf", "anyOf", "noneOf"] as const) {
      const list = raw.check[key];
      if (list === undefined) continue;
      if (!Array.isArray(list) || !list.every((p) => typeof p === "string" && p !== "")) fail(`\`check.${key}\` must be non-empty strings`);
      for (const p of list as string[]) compiles(p, `check.${key}`, fail);
      check[key] = list as string[];
    }
    if (raw.check.abstain !== undefined && typeof raw.check.abstain !== "boolean") fail("`check.abstain` must be a boolean");
    if (raw.check.abstain) check.abstain = true;
    if (!check.abstain && !check.allOf?.length && !check.anyOf?.length) fail("`check` needs `allOf`, `anyOf` or `abstain`");
    if ((raw.category === "abstention") !== !!check.abstain) fail("abstention cases, and only they, check `abstain`");
    const superseded = raw.superseded ?? [];
    if (!Array.isArray(superseded) || !superseded.every((p) => typeof p === "string" && p !== ""))
      fail("`superseded` must be non-empty strings");
    for (const p of superseded as string[]) compiles(p, "superseded", fail);
    if (raw.smoke !== undefined && typeof raw.smoke !== "boolean") fail("`smoke` must be a boolean");
    return {
      id: raw.id as string,
      category: raw.category as Category,
      smoke: raw.smoke === true,
      sessions,
      question: raw.question as string,
      expected: raw.expected as string,
      check,
      superseded: superseded as string[],
    };
  });
  return { askedAt, cases };
}

function compiles(source: string, field: string, fail: (m: string) => never): void {
  try {
    pattern(source);
  } catch (e) {
    fail(`\`${field}\`: ${JSON.stringify(source)} is not a valid regular expression (${e instanceof Error ? e.message : String(e)})`);
  }
}

/** `cases` taken one per category in turn (knowledge updates first), each category in file order. */
export function interleave(cases: readonly EvalCase[]): EvalCase[] {
  const order: readonly Category[] = ["knowledge-update", "multi-session", "single-session", "preference", "temporal", "abstention"];
  const queues = order.map((category) => cases.filter((c) => c.category === category));
  const out: EvalCase[] = [];
  while (queues.some((q) => q.length > 0)) for (const q of queues) if (q.length > 0) out.push(q.shift() as EvalCase);
  return out;
}
