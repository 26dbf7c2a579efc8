/** The agent's options are declared once, in `deepAgentOptionsSchema`: the documentation of
 * every option (what typedoc shows on `DeepAgentOptions`) states its default, and a fixed
 * default stated there is the one the schema holds (`DEFAULT_OPTIONS`, what runs use). */
import { readFileSync } from "node:fs";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { DEFAULT_OPTIONS, deepAgentOptionsSchema } from "../src/agent/options.js";
import { createDeepAgent, FakeChatModel } from "../src/index.js";
import { core } from "./fixtures/session.js";

const SOURCE = new URL("../src/agent/options.ts", import.meta.url);

/** Each property of the object literal given to `z.strictObject` in `const <name> = …`, with
 * its documentation comment. */
function documented(source: string, name: string): Map<string, string> {
  const file = ts.createSourceFile("options.ts", source, ts.ScriptTarget.Latest, true);
  const docs = new Map<string, string>();
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && node.name.getText(file) === name && node.initializer && ts.isCallExpression(node.initializer)) {
      const shape = node.initializer.arguments[0];
      if (shape && ts.isObjectLiteralExpression(shape)) {
        for (const p of shape.properties) {
          const text = ts
            .getJSDocCommentsAndTags(p)
            .map((d) => d.getText(file))
            .join("\n");
          docs.set(p.name?.getText(file) ?? "", text.replace(/^\s*\/?\*+\/?/gm, "").replace(/\s+/g, " "));
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return docs;
}

/** How the documentation writes a default value. */
function written(value: unknown): string[] {
  if (Array.isArray(value) && value.length === 0) return ["none"];
  if (typeof value === "object" && value !== null && Object.keys(value).length === 0) return ["none"];
  if (value === false) return ["off", "`false`"];
  if (value === true) return ["`true`"];
  if (typeof value === "number") return [value.toLocaleString("en-US")];
  if (typeof value === "string") return [`\`${JSON.stringify(value)}\``];
  throw new Error(`no written form for ${JSON.stringify(value)}`);
}

/** The default a documentation comment states: the text after "Default: " to the sentence's end. */
const statedDefault = (doc: string) => /Default: (.*?)\.(?:\s|$)/.exec(doc)?.[1] ?? "";

/** Whether `stated` is `value` as the documentation writes it (a remark may follow). */
const states = (stated: string, value: unknown) => written(value).some((w) => stated === w || stated.startsWith(`${w} `));

describe("options declared once", () => {
  const docs = documented(readFileSync(SOURCE, "utf8"), "deepAgentOptionsSchema");

  it("documents every option of the schema with its default", () => {
    expect([...docs.keys()].sort()).toEqual(Object.keys(deepAgentOptionsSchema.shape).sort());
    const undocumented = [...docs].filter(([, doc]) => !/Default: /.test(doc)).map(([name]) => name);
    expect(undocumented).toEqual([]);
  });

  it("states each fixed default as the schema holds it", () => {
    expect(Object.keys(DEFAULT_OPTIONS).length).toBeGreaterThanOrEqual(20);
    for (const [name, value] of Object.entries(DEFAULT_OPTIONS)) {
      const stated = statedDefault(docs.get(name) ?? "");
      expect(states(stated, value), `${name}: "Default: ${stated}" vs ${JSON.stringify(value)}`).toBe(true);
    }
  });

  it("catches a default the documentation does not state", () => {
    const changed = documented(
      ["const s = z.strictObject({", "  /** Turns. Default: 100. */", "  maxTurns: z._default(int(1), 10),", "});"].join("\n"),
      "s",
    );
    expect(states(statedDefault(changed.get("maxTurns") ?? ""), 10)).toBe(false);
    expect(states(statedDefault(changed.get("maxTurns") ?? ""), 100)).toBe(true);
  });

  it("runs with the schema's defaults", async () => {
    // maxTurns: each turn calls a tool, so the level stops at the default bound.
    const model = new FakeChatModel(() => ({ toolCalls: [{ name: "ls", args: { path: "/" } }] }));
    const out = await createDeepAgent(model, { core, enableSubagents: false }).invoke({
      messages: [{ role: "user", content: "go" }],
    });
    expect(out.stopReason).toBe("max_turns");
    expect(model.requests).toHaveLength(DEFAULT_OPTIONS.maxTurns);
  });
});
