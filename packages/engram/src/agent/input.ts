/**
 * What `invoke` and `stream` accept as input, checked before anything of the thread is read:
 * new messages in the roles a conversation has (the system prompt is the agent's, never a
 * caller's message), or a resume.
 * @module
 */
import * as z from "zod/mini";
import { EngramError } from "../errors.js";
import { parseParams } from "../zod.js";
import type { AgentInput } from "./types.js";

const SYSTEM_REFUSED =
  "'system' is not accepted: the system prompt is the agent's (its systemPrompt option, or a middleware's beforeModel), never a message of the input";

const role = z.enum(["user", "assistant", "tool"], {
  error: (issue) => (issue.input === "system" ? SYSTEM_REFUSED : "must be user, assistant or tool"),
});

const messages = z.array(
  z.looseObject({ role, content: z.string({ message: "must be a string" }) }, { message: "must be a message { role, content }" }),
  { message: "must be an array of messages" },
);

/** `messages[2].role` from a zod issue path. */
function issuePath(path: readonly PropertyKey[]): string {
  return path.map((k) => (typeof k === "number" ? `[${k}]` : `.${String(k)}`)).join("");
}

/** Throws an `invalid_argument` {@link EngramError} unless `input` is `{ messages }` of
 * user, assistant and tool messages, or a resume. */
export function checkInput(input: AgentInput): void {
  if (input === null || typeof input !== "object")
    throw new EngramError("invalid_argument", "input must be { messages: Message[] } or resume(decisions)");
  if ("resume" in input) {
    if (typeof input.resume !== "object" || input.resume === null)
      throw new EngramError("invalid_argument", "input.resume must be an object of decisions by tool call id");
    return;
  }
  const parsed = messages.safeParse((input as { messages?: unknown }).messages, parseParams());
  if (parsed.success) return;
  const issue = parsed.error.issues[0] as z.core.$ZodIssue;
  throw new EngramError("invalid_argument", `input.messages${issuePath(issue.path)}: ${issue.message}`);
}
