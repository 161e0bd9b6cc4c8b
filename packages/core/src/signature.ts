// Batch signatures for loop detection: two batches are "identical" when they call the same tools
// with the same arguments in the same order, whatever the call ids and whatever the key order.
import type { BatchCall, JsonValue } from './types.js';

/** Strings that JSON.stringify would leave as they are (no quote, backslash, control or lone surrogate). */
const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/** JSON.stringify for a string, without its cost for the usual plain names and keys. */
function quote(text: string): string {
  return PLAIN.test(text) ? `"${text}"` : JSON.stringify(text);
}

/** JSON with object keys sorted at every depth, so reordered keys give the same text. */
export function canonicalJson(value: JsonValue): string {
  if (value === null) return 'null';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return quote(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i] as JsonValue);
    return `${out}]`;
  }
  const record = value as { readonly [key: string]: JsonValue };
  const keys = Object.keys(record);
  // Model-written arguments usually come with few keys, often already in order: sort only if not.
  for (let i = 1; i < keys.length; i++) {
    if ((keys[i - 1] as string) > (keys[i] as string)) {
      keys.sort();
      break;
    }
  }
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    out += `${i === 0 ? '' : ','}${quote(key)}:${canonicalJson(record[key] as JsonValue)}`;
  }
  return `${out}}`;
}

/** Name plus canonical input per call, in call order; ids are ignored. */
export function batchSignature(calls: readonly BatchCall[]): string {
  let out = '[';
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i] as BatchCall;
    out += `${i === 0 ? '' : ','}[${quote(call.name)},${canonicalJson(call.input)}]`;
  }
  return `${out}]`;
}

/**
 * True when two batches call the same tools with the same inputs in the same order, ids and key
 * order ignored: exactly when their `batchSignature`s are equal (a property test pins that).
 */
export function sameBatch(a: readonly BatchCall[], b: readonly BatchCall[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as BatchCall;
    const y = b[i] as BatchCall;
    if (x.name !== y.name || !sameJson(x.input, y.input)) return false;
  }
  return true;
}

/** Deep equality of JSON values, object key order ignored. */
export function sameJson(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i] as JsonValue, b[i] as JsonValue)) return false;
    return true;
  }
  const x = a as { readonly [key: string]: JsonValue };
  const y = b as { readonly [key: string]: JsonValue };
  let keys = 0;
  for (const key in x) {
    if (!Object.hasOwn(x, key)) continue;
    keys++;
    if (!Object.hasOwn(y, key) || !sameJson(x[key] as JsonValue, y[key] as JsonValue)) return false;
  }
  for (const key in y) if (Object.hasOwn(y, key)) keys--;
  return keys === 0;
}
