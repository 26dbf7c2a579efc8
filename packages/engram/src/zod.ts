/**
 * @internal The library's schemas are written with `zod/mini` (functions instead of methods, so
 * an edge bundle carries only the zod it uses). Mini loads no error messages of its own: every
 * parse whose issues reach a person or a model passes {@link parseParams}.
 * @module
 */
import { en } from "zod/locales";
import * as z from "zod/mini";

const english = en().localeError;

/** Parse parameters giving zod's English messages, unless the application configured its own
 * (`z.config(…)`, which importing classic `zod` also does, with the same English messages). */
export function parseParams(): z.core.ParseContext<z.core.$ZodIssue> | undefined {
  const config = z.config();
  return config.customError || config.localeError ? undefined : { error: english };
}
