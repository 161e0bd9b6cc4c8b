// Batch signatures for loop detection: two batches are "identical" when they call the same tools
// with the same arguments in the same order, whatever the call ids and whatever the key order.
import type { JsonValue, ToolCall } from './types.js';

/** JSON with object keys sorted at every depth, so reordered keys give the same text. */
export function canonicalJson(value: JsonValue): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, JsonValue> = {};
    for (const key of Object.keys(value).sort()) sorted[key] = sortKeys((value as Record<string, JsonValue>)[key] as JsonValue);
    return sorted;
  }
  return value;
}

/** Name plus canonical input per call, in call order; ids are ignored. */
export function batchSignature(calls: readonly ToolCall[]): string {
  return canonicalJson(calls.map((call) => [call.name, call.input]));
}
