// Checking the final answer: with an `output` schema the text must be JSON that the schema accepts;
// a failure goes back to the model as `output_rejected` with a reason it can act on.

import { errorMessage, formatPath } from '@turnkit/core/internal';
import type { JsonValue, TurnEvent } from '@turnkit/core';
import type { CheckFn, OutputSchema } from './types.js';

/** Thrown when the user's `check` function fails; the driver turns it into a failed turn. */
export class CheckFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckFailedError';
  }
}

/** Models often wrap JSON in a ```json fence; the fence is not part of the answer. */
function unfence(text: string): string {
  const fenced = /^\s*```[a-zA-Z]*\s*\n([\s\S]*?)\n?\s*```\s*$/.exec(text);
  return fenced?.[1] ?? text.trim();
}

/**
 * Parses and validates `candidate` against `schema`. Returns the value, or a reason for the model
 * naming each failing path.
 */
export function parseOutput(
  candidate: string,
  schema: OutputSchema,
): { ok: true; value: unknown } | { ok: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(unfence(candidate));
  } catch (error) {
    const why = errorMessage(error);
    return {
      ok: false,
      reason: `Your final answer must be JSON, but it could not be parsed (${why}). Reply with the JSON value only.`,
    };
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issues = parsed.error.issues.map((issue) => `at ${formatPath(issue.path)}: ${issue.message}`);
  return {
    ok: false,
    reason: `Your final answer does not match the expected shape: ${issues.join('; ')}. Reply with the corrected JSON only.`,
  };
}

/**
 * The event for a `check_output` effect without a `check`, at once: `output_accepted` with the
 * parsed value (or the text when there is no schema), or `output_rejected`.
 */
export function readOutput(
  candidate: string,
  schema: OutputSchema | undefined,
):
  | { readonly type: 'output_accepted'; readonly output: JsonValue }
  | { readonly type: 'output_rejected'; readonly reason: string } {
  if (schema === undefined) return { type: 'output_accepted', output: candidate };
  const parsed = parseOutput(candidate, schema);
  if (!parsed.ok) return { type: 'output_rejected', reason: parsed.reason };
  return { type: 'output_accepted', output: parsed.value as JsonValue };
}

/**
 * The event for a `check_output` effect: `output_accepted` with the parsed value (or the text when
 * there is no schema), or `output_rejected`. A `check` that throws or answers garbage raises a
 * CheckFailedError naming it.
 */
export async function checkOutput(
  candidate: string,
  schema: OutputSchema | undefined,
  check: CheckFn | undefined,
): Promise<TurnEvent> {
  const read = readOutput(candidate, schema);
  if (check === undefined || read.type !== 'output_accepted') return read;
  const output = read.output;
  let verdict: unknown;
  try {
    verdict = await check(candidate, output);
  } catch (error) {
    const why = errorMessage(error);
    throw new CheckFailedError(
      `The output check function threw: ${why}. Fix the check passed as \`check\`; the model's answer was not judged.`,
    );
  }
  if (verdict !== null && typeof verdict === 'object' && 'ok' in verdict) {
    if (verdict.ok === true)
      return {
        type: 'output_accepted',
        output: 'output' in verdict && verdict.output !== undefined ? (verdict.output as JsonValue) : output,
      };
    if (verdict.ok === false && 'reason' in verdict && typeof verdict.reason === 'string')
      return { type: 'output_rejected', reason: verdict.reason };
  }
  throw new CheckFailedError(
    `The output check function returned ${JSON.stringify(verdict) ?? String(verdict)}; it must return { ok: true } or { ok: false, reason: '...' }.`,
  );
}
