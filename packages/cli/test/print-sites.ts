/**
 * Lists every place the `engram` command prints (a write to stdout or stderr, console, a readline
 * prompt, the command's own print helpers) and checks what each prints: a constant, text the
 * renderer made inert (`inert`, `inertLines`, `jsonText`), colours over those, a function whose
 * every return value is such, or an expression on the allow-list with the reason it is safe.
 * Anything else is a raw print of possibly untrusted text. Syntax only (TypeScript's parser).
 */
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

/** The renderer's functions: what they return is safe to print. */
const RENDERERS = new Set(["inert", "inertLines", "jsonText"]);

/** Functions that print their arguments (each call is a print site), by file. Inside them their
 * parameters may be printed as they are: the calls are checked instead. */
export const PRINT_HELPERS: Record<string, string[]> = {
  "context.ts": [],
  "terminal.ts": ["#line", "start", "begin"],
  "commands/chat.ts": ["print", "ask"],
  "commands/memory.ts": ["w"],
};

/** Functions whose return value is printed: every value they return is checked, so a call to one
 * is safe. By file of declaration; the name is enough at a call site. */
export const RENDERING_FUNCTIONS: Record<string, string[]> = {
  "terminal.ts": ["callTarget", "oneLine", "firstLine", "formatBytes", "stageLabel"],
  "commands/threads.ts": ["preview", "renderMessage"],
  "commands/thread-history.ts": ["pointLine", "rewindCommand"],
};

/** Calls that print their argument on one line through the renderer themselves: listed as print
 * sites, their arguments need nothing more. */
const RENDERING_SINKS = /^(ctx\.(error|usage|warn)|renderer\.warn|this\.warn)$/;

/** Receivers of `.write(…)` that are not the terminal. */
const NOT_OUTPUT = new Set(["backend"]);
/** Receivers of `.write(…)` that are. */
const OUTPUT = /^(ctx\.(stdout|stderr)|process\.(stdout|stderr)|this\.(out|status)|this\.#rl|rl)$/;
/** Readline methods that show their first argument. */
const PROMPTS = new Set(["question", "setPrompt"]);
/** String methods that add nothing a terminal acts on to the (safe) text they are called on. */
const SAFE_METHODS = new Set([
  "trim",
  "trimEnd",
  "trimStart",
  "padEnd",
  "padStart",
  "slice",
  "split",
  "join",
  "filter",
  "toUpperCase",
  "toLowerCase",
]);
/** Methods whose result is safe whatever they are called on (digits, a date). */
const SAFE_RESULTS = new Set(["toFixed", "toISOString"]);
/** picocolors' functions (`c.bold(…)`): they wrap safe text in their own escape sequences. */
const COLOUR_RECEIVER = /^(c|this\.c|ctx\.colors\(.*\))$/;

/** An expression printed as it is, with the reason that is safe. */
export interface Allowed {
  file: string;
  expr: string;
  why: string;
}

export interface PrintSite {
  file: string;
  line: number;
  call: string;
}

export interface Violation extends PrintSite {
  expr: string;
}

export interface ScanResult {
  sites: PrintSite[];
  violations: Violation[];
  /** Allow-list entries no print used. */
  unused: Allowed[];
}

/** Every `.ts` file under `dir`, relative to it, with `/` separators. */
export function sourceFiles(dir: string): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts")) out.push({ file: relative(dir, path).split("\\").join("/"), text: readFileSync(path, "utf8") });
    }
  };
  walk(dir);
  return out.sort((a, b) => a.file.localeCompare(b.file));
}

function functionName(node: ts.Node): string | undefined {
  if ((ts.isMethodDeclaration(node) || ts.isFunctionDeclaration(node)) && node.name) return node.name.getText();
  if ((ts.isArrowFunction(node) || ts.isFunctionExpression(node)) && ts.isVariableDeclaration(node.parent))
    return node.parent.name.getText();
  return undefined;
}

function isFunction(node: ts.Node): node is ts.FunctionLikeDeclaration {
  return ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isArrowFunction(node) || ts.isFunctionExpression(node);
}

/** Checks every print site of `files` against the rules above and `allowed`. */
export function scanPrintSites(files: { file: string; text: string }[], allowed: Allowed[]): ScanResult {
  const sites: PrintSite[] = [];
  const violations: Violation[] = [];
  const used = new Set<Allowed>();
  const rendering = new Set(Object.values(RENDERING_FUNCTIONS).flat());
  const printing = new Set(Object.values(PRINT_HELPERS).flat());

  for (const { file, text } of files) {
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const helpers = new Set(PRINT_HELPERS[file] ?? []);
    // A const array that is added to holds more than its initializer says.
    const grown = new Set<string>();
    const findGrown = (n: ts.Node): void => {
      if (
        ts.isCallExpression(n) &&
        ts.isPropertyAccessExpression(n.expression) &&
        ["push", "unshift", "splice"].includes(n.expression.name.text)
      )
        grown.add(n.expression.expression.getText());
      ts.forEachChild(n, findGrown);
    };
    findGrown(source);
    const lineOf = (n: ts.Node) => source.getLineAndCharacterOfPosition(n.getStart()).line + 1;

    /** What the `const` `name` visible from `at` holds (nearest enclosing block first); for a
     * `for (const name of list)`, the list (its elements are what `name` holds). */
    const constant = (name: string, at: ts.Node): ts.Expression | undefined => {
      for (let scope: ts.Node | undefined = at.parent; scope; scope = scope.parent) {
        if (ts.isForOfStatement(scope) && ts.isVariableDeclarationList(scope.initializer) && scope.initializer.flags & ts.NodeFlags.Const) {
          if (scope.initializer.declarations.some((d) => d.name.getText() === name))
            return grown.has(scope.expression.getText()) ? undefined : scope.expression;
        }
        const statements = ts.isBlock(scope) || ts.isSourceFile(scope) ? scope.statements : undefined;
        for (const st of statements ?? []) {
          if (!ts.isVariableStatement(st) || !(st.declarationList.flags & ts.NodeFlags.Const)) continue;
          for (const d of st.declarationList.declarations)
            if (d.name.getText() === name && d.initializer) return grown.has(name) ? undefined : d.initializer;
        }
      }
      return undefined;
    };

    /** Whether `name` is a parameter of an enclosing function declared a number. */
    const numberParameter = (name: string, at: ts.Node): boolean => {
      for (let n: ts.Node | undefined = at.parent; n; n = n.parent) {
        if (!isFunction(n)) continue;
        const p = n.parameters.find((x) => x.name.getText() === name);
        if (p) return p.type?.kind === ts.SyntaxKind.NumberKeyword;
      }
      return false;
    };

    /** Whether `name` is a parameter of an enclosing print helper. */
    const helperParameter = (name: string, at: ts.Node): boolean => {
      for (let n: ts.Node | undefined = at.parent; n; n = n.parent) {
        if (isFunction(n) && helpers.has(functionName(n) ?? "") && n.parameters.some((p) => p.name.getText() === name)) return true;
      }
      return false;
    };

    const allow = (e: ts.Expression): boolean => {
      const entry = allowed.find((a) => a.file === file && a.expr === e.getText());
      if (entry) used.add(entry);
      return entry !== undefined;
    };

    /** The unsafe parts of `e` (empty when all of it is safe to print). */
    const unsafe = (e: ts.Expression, seen: Set<ts.Node> = new Set()): ts.Expression[] => {
      if (seen.has(e)) return [];
      seen.add(e);
      const all = (es: readonly ts.Expression[]) => es.flatMap((x) => unsafe(x, seen));
      if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e) || ts.isNumericLiteral(e)) return [];
      if (e.kind === ts.SyntaxKind.NullKeyword || e.kind === ts.SyntaxKind.TrueKeyword || e.kind === ts.SyntaxKind.FalseKeyword) return [];
      if (ts.isTemplateExpression(e)) return all(e.templateSpans.map((s) => s.expression));
      if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isNonNullExpression(e)) return unsafe(e.expression, seen);
      // An element of a safe list.
      if (ts.isElementAccessExpression(e)) return unsafe(e.expression, seen);
      if (ts.isConditionalExpression(e)) return all([e.whenTrue, e.whenFalse]);
      if (ts.isBinaryExpression(e)) {
        const op = e.operatorToken.kind;
        if (op === ts.SyntaxKind.PlusToken || op === ts.SyntaxKind.BarBarToken || op === ts.SyntaxKind.QuestionQuestionToken)
          return all([e.left, e.right]);
        if (op === ts.SyntaxKind.AmpersandAmpersandToken) return unsafe(e.right, seen);
      }
      if (ts.isArrayLiteralExpression(e)) return all(e.elements.map((x) => (ts.isSpreadElement(x) ? x.expression : x)));
      if (ts.isObjectLiteralExpression(e)) return all(e.properties.flatMap((p) => (ts.isPropertyAssignment(p) ? [p.initializer] : [])));
      if (ts.isCallExpression(e)) {
        const callee = e.expression;
        if (ts.isIdentifier(callee) && (RENDERERS.has(callee.text) || rendering.has(callee.text))) return [];
        if (ts.isPropertyAccessExpression(callee)) {
          const method = callee.name.text;
          if (COLOUR_RECEIVER.test(callee.expression.getText())) return all(e.arguments);
          if (SAFE_RESULTS.has(method) || callee.expression.getText() === "Math") return [];
          if (SAFE_METHODS.has(method)) return unsafe(callee.expression, seen);
          if (method === "replace" && e.arguments[1] && ts.isStringLiteral(e.arguments[1])) return unsafe(callee.expression, seen);
          if (method === "map" && e.arguments[0] && (ts.isArrowFunction(e.arguments[0]) || ts.isFunctionExpression(e.arguments[0]))) {
            const body = e.arguments[0].body;
            return ts.isBlock(body) ? [e] : unsafe(body, seen);
          }
        }
      }
      if (ts.isIdentifier(e)) {
        if (e.text === "undefined") return [];
        if (helperParameter(e.text, e) || numberParameter(e.text, e)) return [];
        const init = constant(e.text, e);
        // A constant is as safe as what it holds: report what in it is not (or the name).
        const inner = init ? unsafe(init, seen) : [e];
        if (inner.length === 0 || allow(e)) return [];
        return inner.filter((x) => !allow(x));
      }
      return allow(e) ? [] : [e];
    };

    const check = (call: ts.CallExpression, args: readonly ts.Expression[]) => {
      const site = { file, line: lineOf(call), call: call.expression.getText() };
      sites.push(site);
      for (const a of args) for (const bad of unsafe(a)) violations.push({ ...site, expr: bad.getText() });
    };

    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node)) {
        const callee = node.expression;
        if (ts.isPropertyAccessExpression(callee)) {
          const receiver = callee.expression.getText();
          const method = callee.name.text;
          if (method === "write" && !NOT_OUTPUT.has(receiver)) {
            if (OUTPUT.test(receiver)) check(node, node.arguments.slice(0, 1));
            else violations.push({ file, line: lineOf(node), call: callee.getText(), expr: "(a write to an unknown stream)" });
          } else if (receiver === "console" || PROMPTS.has(method)) check(node, node.arguments.slice(0, 1));
          else if (RENDERING_SINKS.test(callee.getText())) sites.push({ file, line: lineOf(node), call: callee.getText() });
          else if (printing.has(method)) check(node, node.arguments);
        } else if (ts.isIdentifier(callee) && helpers.has(callee.text)) check(node, node.arguments);
      }
      if (
        isFunction(node) &&
        Object.entries(RENDERING_FUNCTIONS).some(([f, names]) => f === file && names.includes(functionName(node) ?? ""))
      ) {
        const returns: ts.Expression[] = [];
        const collect = (n: ts.Node): void => {
          if (ts.isReturnStatement(n) && n.expression) returns.push(n.expression);
          else if (!isFunction(n)) ts.forEachChild(n, collect);
        };
        if (node.body && ts.isBlock(node.body)) ts.forEachChild(node.body, collect);
        else if (node.body) returns.push(node.body as ts.Expression);
        for (const r of returns)
          for (const bad of unsafe(r))
            violations.push({ file, line: lineOf(r), call: `return of ${functionName(node)}`, expr: bad.getText() });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return { sites, violations, unused: allowed.filter((a) => !used.has(a)) };
}
