// Output shaping (pipeline stage 9): whatever a tool returns becomes a JSON value of bounded size.
// Every result leaves the dispatcher through `shapeResult`, once.
//
// Rules of this file:
// - `undefined` follows JSON.stringify: at the top it becomes `null`, as an object property it is
//   left out, as an array item it becomes `null`. Objects with `toJSON` (Date) are converted by it.
// - Functions, symbols, BigInts, NaN/Infinity, cycles, Maps, Sets and Promises are not JSON: the
//   output is refused with a problem naming the path, because silently dropping them (as
//   JSON.stringify does) would hand the model a misleading value.
// - Keys are copied as own properties (`__proto__` included), so a hostile output can never reach
//   Object.prototype.
// - Nesting deeper than MAX_DEPTH is refused instead of risking a stack overflow.

import type { JsonValue, ToolResult } from '@turnkit/core';
import { errorMessage } from '@turnkit/core/internal';
import { quote } from './text.js';
import type { RawResult } from './types.js';

/** Deepest nesting of a tool output that is accepted. */
export const MAX_DEPTH = 1000;

export type ShapeOutcome = { readonly ok: true; readonly value: JsonValue } | { readonly ok: false; readonly problem: string };

class NotJson extends Error {}

function pathText(path: readonly (string | number)[]): string {
  let text = '$';
  for (const part of path) {
    text +=
      typeof part === 'number'
        ? `[${part}]`
        : /^[A-Za-z_$][\w$]*$/.test(part)
          ? `.${part}`
          : `[${JSON.stringify(part.slice(0, 40))}]`;
    if (text.length > 200) return `${text.slice(0, 200)}…`;
  }
  return text;
}

function describeNonJson(value: unknown): string | undefined {
  switch (typeof value) {
    case 'function':
      return 'a function';
    case 'symbol':
      return 'a symbol';
    case 'bigint':
      return 'a BigInt';
    case 'number':
      return Number.isFinite(value) ? undefined : `the number ${String(value)}`;
    default:
      if (value instanceof Map) return 'a Map';
      if (value instanceof Set) return 'a Set';
      if (value instanceof Promise) return 'a Promise (a missing await?)';
      return undefined;
  }
}

function convert(value: unknown, key: string, path: (string | number)[], ancestors: Set<object>): JsonValue | undefined {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON(key: string): unknown }).toJSON(key);
  }
  if (value === undefined) return undefined;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  const bad = describeNonJson(value);
  if (bad !== undefined) throw new NotJson(`${bad} at ${pathText(path)}`);
  if (typeof value === 'number') return value;
  const object = value as object;
  if (ancestors.has(object)) throw new NotJson(`a cycle at ${pathText(path)}`);
  if (path.length >= MAX_DEPTH) throw new NotJson(`nesting deeper than ${MAX_DEPTH} levels at ${pathText(path.slice(0, 5))}…`);
  ancestors.add(object);
  try {
    if (Array.isArray(object)) {
      const out: JsonValue[] = [];
      for (let i = 0; i < object.length; i++) {
        path.push(i);
        out.push(convert(object[i], String(i), path, ancestors) ?? null);
        path.pop();
      }
      return out;
    }
    const entries: [string, JsonValue][] = [];
    for (const k of Object.keys(object)) {
      path.push(k);
      const item = convert((object as Record<string, unknown>)[k], k, path, ancestors);
      path.pop();
      if (item !== undefined) entries.push([k, item]);
    }
    // fromEntries defines own properties: a `__proto__` key stays a key like any other.
    return Object.fromEntries(entries);
  } finally {
    ancestors.delete(object);
  }
}

/**
 * Converts a tool's return value into a JSON value, or says why it cannot be one.
 *
 * @example toJsonValue({ at: new Date(0) }) // { ok: true, value: { at: '1970-01-01T00:00:00.000Z' } }
 */
export function toJsonValue(value: unknown): ShapeOutcome {
  // The common outputs, a string, a boolean or a finite number, need no walk.
  if (value === null || typeof value === 'string' || typeof value === 'boolean' || Number.isFinite(value))
    return { ok: true, value: value as JsonValue };
  try {
    return { ok: true, value: convert(value, '', [], new Set()) ?? null };
  } catch (error) {
    if (error instanceof NotJson) return { ok: false, problem: error.message };
    if (error instanceof RangeError) return { ok: false, problem: 'a value nested too deeply to read' };
    return { ok: false, problem: `a value that threw while being read (${errorMessage(error)})` };
  }
}

function cut(text: string, maxChars: number): string {
  let end = maxChars;
  // Do not split a surrogate pair: the kept text stays valid UTF-16.
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…[truncated ${text.length - end} chars]`;
}

/**
 * Bounds an output's size. A string longer than `maxChars` keeps its first `maxChars` characters
 * followed by `…[truncated N chars]`. An array or object whose JSON text is longer than `maxChars`
 * is replaced by that JSON text, cut the same way (the model then sees the start of the JSON).
 */
export function capOutput(value: JsonValue, maxChars: number): JsonValue {
  if (typeof value === 'string') return value.length > maxChars ? cut(value, maxChars) : value;
  if (value === null || typeof value !== 'object') return value;
  const text = JSON.stringify(value);
  return text.length > maxChars ? cut(text, maxChars) : value;
}

/**
 * Stage 9: a result with a JSON output of bounded size. An output that is not JSON makes the
 * result an error saying where the bad value is; `stop` and `modelOverride` are kept.
 */
export function shapeResult(raw: RawResult, maxOutputChars: number): ToolResult {
  const shaped = toJsonValue(raw.output);
  const output = shaped.ok
    ? capOutput(shaped.value, maxOutputChars)
    : `Tool ${quote(raw.name)} returned a value that is not JSON (${shaped.problem}). The tool ran, but its output cannot be shown.`;
  const errorKind = shaped.ok ? (raw.isError ? (raw.errorKind ?? 'tool_error') : undefined) : 'invalid_output';
  const { stop, modelOverride, action } = raw;
  const result: { -readonly [K in keyof ToolResult]: ToolResult[K] } = {
    callId: raw.callId,
    name: raw.name,
    output,
    isError: shaped.ok ? raw.isError : true,
  };
  if (errorKind !== undefined) result.errorKind = errorKind;
  if (stop !== undefined) result.stop = stop;
  if (modelOverride !== undefined) result.modelOverride = modelOverride;
  if (action !== undefined && shaped.ok) result.action = action;
  return result;
}
