// Pipeline stages 1–3: normalise the call the model sent, resolve its tool, validate its input.
// Each field of the call is read once, into a plain copy; nothing of the original is read again.

import * as z from 'zod';
import type { JsonValue, ToolCall } from '@turnkit/core';
import { errorMessage, copyJson } from '@turnkit/core/internal';
import { coerceBySchema } from '../coerce.js';
import type { AnyTool } from '../config.js';
import { deny, type Denial } from '../results.js';
import { quote } from '../text.js';

const MAX_ISSUES = 20;

export type Validated = { readonly ok: true; readonly input: unknown } | { readonly ok: false; readonly text: string };

/** Stage 1: a plain `ToolCall`, or a denial (`invalid_call`, `invalid_json`). May throw on a hostile getter. */
export function normalise(raw: unknown): { readonly kind: 'ok'; readonly call: ToolCall } | Denial {
  const c = raw as Record<string, unknown> | null;
  if (c === null || typeof c !== 'object') {
    return deny(
      { id: '', name: '' },
      'invalid_call',
      'A tool call must be an object with an id, a name and an input; this one was not. Call the tool again.',
      'invalid_input',
    );
  }
  const id = c['id'];
  const name = c['name'];
  if (typeof id !== 'string' || typeof name !== 'string') {
    return deny(
      { id: typeof id === 'string' ? id : '', name: typeof name === 'string' ? name : '' },
      'invalid_call',
      'A tool call needs a string id and a string tool name; this one did not have them. Call the tool again.',
      'invalid_input',
    );
  }
  const rawInput = c['input'];
  const inputError = c['inputError'];
  // The one plain copy of the input, read once: a getter or Proxy cannot show the rules one value and the tool another.
  const input = rawInput === undefined ? null : copyJson(rawInput);
  const call: ToolCall = { id, name, input: input ?? null };
  if (inputError !== undefined) {
    const detail = typeof inputError === 'string' && inputError !== '' ? ` (${inputError.slice(0, 200)})` : '';
    return deny(
      call,
      'invalid_json',
      `The arguments for ${quote(name)} were not valid JSON${detail}. Call ${quote(name)} again with the arguments as one JSON object.`,
      'invalid_input',
    );
  }
  if (input === undefined)
    return deny(
      call,
      'invalid_json',
      `The arguments for ${quote(name)} are not plain JSON. Call ${quote(name)} again with the arguments as one JSON object.`,
      'invalid_input',
    );
  return { kind: 'ok', call };
}

/** The text of an unknown tool's result. */
export function unknownToolText(name: string, availableText: string): string {
  return `Unknown tool ${quote(name)}. Available tools: ${availableText}.`;
}

/** Stage 2: the call's tool by exact name, or a denial (`unknown_tool`). */
export function resolve(
  call: ToolCall,
  tools: ReadonlyMap<string, AnyTool>,
  availableText: string,
): { readonly kind: 'ok'; readonly tool: AnyTool } | Denial {
  const tool = tools.get(call.name);
  return tool === undefined
    ? deny(call, 'unknown_tool', unknownToolText(call.name, availableText), 'unknown_tool')
    : { kind: 'ok', tool };
}

function issuePath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  let text = '';
  for (const part of path)
    text += typeof part === 'number' ? `[${part}]` : `${text === '' ? '' : '.'}${String(part).slice(0, 60)}`;
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** The text of an invalid input's result: one line per issue (at most 20), and what to do. */
export function describeIssues(
  name: string,
  issues: readonly { readonly path: readonly PropertyKey[]; readonly message: string }[],
): string {
  const lines = issues.slice(0, MAX_ISSUES).map((issue) => `- ${issuePath(issue.path)}: ${issue.message.slice(0, 300)}`);
  if (issues.length > MAX_ISSUES) lines.push(`- … and ${issues.length - MAX_ISSUES} more`);
  return `Invalid input for ${quote(name)}:\n${lines.join('\n')}\nFix the arguments and call ${quote(name)} again.`;
}

/**
 * Stage 3 for the model's input: the tool's schema parses it; with `coerce`, an input that fails is
 * coerced towards the tool's JSON Schema (`"42"` → 42) and parsed again. The first failure's text
 * stands when coercion does not help. Never rejects.
 */
export function validateInput(tool: AnyTool, name: string, value: unknown, coerce: boolean): Promise<Validated> {
  const first = validate(tool, name, value);
  if (!coerce) return first;
  return first.then((settled) => {
    if (settled.ok) return settled;
    let coerced: JsonValue;
    try {
      coerced = coerceBySchema(value as JsonValue, tool.inputSchema);
    } catch {
      return settled;
    }
    return validate(tool, name, coerced).then((again) => (again.ok ? again : settled));
  });
}

function uncheckable(name: string, error: unknown): Validated {
  return {
    ok: false,
    text: `The input for ${quote(name)} could not be checked (${errorMessage(error)}). Send a simpler input.`,
  };
}

function parsed(name: string, result: z.ZodSafeParseResult<unknown>): Validated {
  return result.success ? { ok: true, input: result.data } : { ok: false, text: describeIssues(name, result.error.issues) };
}

/**
 * Stage 3 (and again after a before-hook's rewrite): the tool's schema parses `value`, with zod's
 * `safeParseAsync`, so a schema with an async refinement or transform works as any other and every
 * refinement runs once per parse (a synchronous attempt first would run an async refinement twice
 * and drop the promise of the first run). Never rejects.
 */
export function validate(tool: AnyTool, name: string, value: unknown): Promise<Validated> {
  return z.safeParseAsync(tool.input, value).then(
    (result) => parsed(name, result),
    (error: unknown) => uncheckable(name, error),
  );
}
