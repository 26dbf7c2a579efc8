// TypeDoc plugin: puts every top-level export of `engram` in a category named after the source
// folder it is defined in (agent, backends, core, models, ...), so the API reference is grouped
// by area instead of one flat list. A `@category` tag in the source comment wins.
import { Comment, CommentTag, Converter, ReflectionKind } from "typedoc";

const CATEGORIES = [
  ["agent/", "Agent"],
  ["middleware/", "Middleware"],
  ["backends/", "Backends"],
  ["core/", "Core"],
  ["models/", "Models"],
  ["stores/", "Stores"],
  ["tools/", "Tools"],
  ["skills/", "Skills"],
  ["memory/longterm/", "Long-term memory"],
  ["memory/history/", "Memory history"],
  ["memory/recall/", "Thread recall"],
  ["mcp/", "MCP"],
  ["tracing/", "Tracing"],
  ["prompt/", "Prompt"],
  ["errors.ts", "Errors"],
];

/** @param {import("typedoc").Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_CREATE_DECLARATION, (context, reflection) => {
    if (!reflection.parent?.kindOf(ReflectionKind.Project | ReflectionKind.Module)) return;
    const symbol = context.getSymbolFromReflection(reflection);
    const file = symbol?.declarations?.[0]?.getSourceFile().fileName.replace(/\\/g, "/") ?? "";
    const path = file.split("/packages/engram/src/")[1];
    const category = path && CATEGORIES.find(([prefix]) => path.startsWith(prefix))?.[1];
    if (!category) return;
    reflection.comment ??= new Comment();
    if (reflection.comment.blockTags.some((t) => t.tag === "@category")) return;
    reflection.comment.blockTags.push(new CommentTag("@category", [{ kind: "text", text: category }]));
  });
}
