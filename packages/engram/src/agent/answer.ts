/**
 * The structured answer (`responseFormat`): where a run's final answer in the schema stands,
 * and the steps that move it — an answer checked against the schema, a wrong one counted (the
 * second fails the run), the `respond` tool of `responseMode: "tool"`, the prompts that ask
 * again. Each step takes the answer's state and returns the next one.
 * @module
 */
import * as z from "zod/mini";
import { EngramError } from "../errors.js";
import type { Tool } from "../tools/types.js";
import { RESPOND_TOOL } from "./options.js";
import { FORMAT_PROMPT, type StructuredFormat, jsonOf, retryPrompt } from "./structured.js";

/** Where a run's structured final answer stands. */
export interface AnswerState {
  /** The validated answer, once there is one (`done`). */
  value?: unknown;
  done: boolean;
  /** Wrong answers so far, and the last one's validation errors. */
  failures: number;
  errors?: string;
}

/** An answer checked against the schema. */
export type CheckedAnswer = ReturnType<StructuredFormat["validate"]>;

/** No answer yet. */
export function noAnswer(): AnswerState {
  return { done: false, failures: 0 };
}

/** The state after `checked`: the answer taken, or one more wrong answer. */
export function withAnswer(answer: AnswerState, checked: CheckedAnswer): AnswerState {
  if (checked.ok) return { ...answer, value: checked.value, done: true };
  return { ...answer, failures: answer.failures + 1, errors: checked.errors };
}

/** Fails the run (`invalid_response`) once two answers were wrong: the first goes back to the
 * model, the second ends the run. */
export function checkAnswers(answer: AnswerState): void {
  if (answer.failures >= 2)
    throw new EngramError("invalid_response", `the model's final answer does not match responseFormat: ${answer.errors ?? "(no answer)"}`);
}

/** A wrong answer counted, and the run failed when it is the second. */
function rejected(answer: AnswerState, errors: string): AnswerState {
  const next = withAnswer(answer, { ok: false, errors });
  checkAnswers(next);
  return next;
}

/** A text answer checked against the schema; `undefined` when it is not JSON. */
function checkText(format: StructuredFormat, text: string): CheckedAnswer | undefined {
  const json = jsonOf(text);
  return json && format.validate(json.value);
}

/** The next step of an answer: the state, and the prompt that asks the model again (none when
 * the answer was taken). */
export interface AnswerStep {
  answer: AnswerState;
  prompt?: string;
}

/**
 * Native mode (`responseMode: "native"`), the model's `attempt`-th answer (0: the reply that
 * ended its work): taken when it is the schema's JSON; the first reply in prose is asked for
 * the JSON, anything else is a wrong answer sent back with its errors.
 */
export function nativeAnswerStep(answer: AnswerState, format: StructuredFormat, text: string, attempt: number): AnswerStep {
  const checked = checkText(format, text);
  if (checked?.ok) return { answer: withAnswer(answer, checked) };
  if (attempt === 0 && !checked) return { answer, prompt: FORMAT_PROMPT };
  const errors = checked ? checked.errors : "the answer is not a JSON object";
  return { answer: rejected(answer, errors), prompt: retryPrompt(errors) };
}

/** Tool mode (`responseMode: "tool"`), a reply without tool calls: an answer only as the
 * schema's JSON; else a wrong answer and, once, a reminder to call the tool. */
export function proseAnswerStep(answer: AnswerState, format: StructuredFormat, text: string): AnswerStep {
  const checked = checkText(format, text);
  if (checked?.ok) return { answer: withAnswer(answer, checked) };
  return {
    answer: rejected(answer, checked ? checked.errors : `no ${RESPOND_TOOL} call`),
    prompt: `Give your final answer by calling ${RESPOND_TOOL}.`,
  };
}

/** The tool that ends a run with its final answer (`responseMode: "tool"`): each call's
 * arguments, checked against the schema, go to `record`. A wrong answer is an error result;
 * the loop fails the run at the second ({@link checkAnswers}). */
export function respondTool(format: StructuredFormat, record: (checked: CheckedAnswer) => void): Tool<never> {
  const tool: Tool<unknown> = {
    name: RESPOND_TOOL,
    description: "Gives your final answer, as the arguments. Call it once, when the task is done; it ends your work.",
    schema: z.unknown(),
    jsonSchema: format.jsonSchema,
    async run(input) {
      const checked = format.validate(input);
      record(checked);
      if (checked.ok) return { content: "Final answer recorded." };
      return {
        content: `Error: the answer does not match the required schema: ${checked.errors}. Call ${RESPOND_TOOL} again.`,
        isError: true,
      };
    },
  };
  return tool as Tool<never>;
}
