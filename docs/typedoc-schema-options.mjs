// TypeDoc plugin: an options interface declared by a schema (`interface DeepAgentOptions extends
// z.input<typeof deepAgentOptionsSchema> {}`, or `Readonly<…>` of such a type) documents the
// schema's properties as its own: no "Inherited from z.input…" on each option, no hierarchy
// naming zod's types, and no "= …" (the schema expression that declares the option is not a
// default value: each option's documentation states its default).
import { Converter, ReflectionFlag, ReflectionKind } from "typedoc";

/** @param {import("typedoc").SomeType} type */
const declaredBySchema = (type) =>
  type.type === "reference" && (type.package === "zod" || (type.package === "typescript" && type.name === "Readonly"));

/** @param {import("typedoc").Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_END, (context) => {
    for (const reflection of context.project.getReflectionsByKind(ReflectionKind.Interface)) {
      const declaration = /** @type {import("typedoc").DeclarationReflection} */ (reflection);
      const extended = declaration.extendedTypes ?? [];
      if (extended.length === 0 || !extended.every(declaredBySchema)) continue;
      declaration.extendedTypes = undefined;
      declaration.typeHierarchy = undefined;
      for (const child of declaration.children ?? []) {
        child.inheritedFrom = undefined;
        child.setFlag(ReflectionFlag.Inherited, false);
        child.defaultValue = undefined;
      }
    }
  });
}
