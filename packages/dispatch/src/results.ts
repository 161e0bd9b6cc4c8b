// The results the dispatcher writes itself, before shaping (stage 9 bounds them like any output).

import type { ToolResult } from '@turnkit/core';
import type { ToolErrorKind } from './errors.js';
import type { RawResult, Verdict } from './types.js';

/** A denial as a stage gives it: its result is shaped once, when the verdict leaves the pipeline. */
export interface Denial {
  readonly kind: 'deny';
  readonly result: RawResult;
  readonly source: string;
}

/** A verdict of stages 1–5 before its result is shaped. */
export type RawVerdict = Denial | Exclude<Verdict, { readonly kind: 'deny' }>;

/** An error result with a text output and its kind: a `RawResult` and a `ToolResult` at once. */
export function errorResult(callId: string, name: string, text: string, errorKind: ToolErrorKind): RawResult & ToolResult {
  return { callId, name, output: text, isError: true, errorKind };
}

/** A call that does not run: its error result, and the decision record's source. */
export function deny(
  call: { readonly id: string; readonly name: string },
  source: string,
  text: string,
  errorKind: ToolErrorKind,
): Denial {
  return { kind: 'deny', result: errorResult(call.id, call.name, text, errorKind), source };
}

/** The id and name of anything that may be a call; `''` for what cannot be read. Never throws. */
export function idName(raw: unknown): { id: string; name: string } {
  try {
    const c = raw as { id?: unknown; name?: unknown } | null;
    return { id: typeof c?.id === 'string' ? c.id : '', name: typeof c?.name === 'string' ? c.name : '' };
  } catch {
    return { id: '', name: '' };
  }
}
