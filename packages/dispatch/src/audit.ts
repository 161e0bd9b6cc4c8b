// Audit records: one `CallRecord` per call that got a result from `dispatch` or `executeApproved`,
// built by pure functions from what the pipeline knows, and handed to the observers in one place.

import type { JsonObject } from '@turnkit/core/internal';
import type { JsonValue, ToolResult } from '@turnkit/core';
import type { Turn } from './context.js';
import { toJsonValue } from './shape.js';
import type { CallRecord } from './types.js';

/** What the pipeline knows of a call when its result is final. */
export interface RecordFacts {
  readonly call: { readonly id: string; readonly name: string };
  /** The input that ran; for a call that did not run, the input as sent. */
  readonly input: unknown;
  readonly decision: 'allow' | 'deny' | 'user_approved';
  readonly source: string;
  readonly result: ToolResult;
  readonly attempts: number;
  readonly durationMs: number;
}

/** An input as JSON for the record; a value that is not JSON (a zod transform's Date, say) is null. */
function inputJson(input: unknown): JsonValue {
  const shaped = toJsonValue(input);
  return shaped.ok ? shaped.value : null;
}

/** The record of one call. `context` is the turn's caller-supplied context, left out when empty. */
export function callRecord(turnId: string, context: JsonObject, facts: RecordFacts): CallRecord {
  const { call, result } = facts;
  const outcome = result.isError ? (result.errorKind ?? 'tool_error') : 'ok';
  const reason =
    result.isError && facts.attempts === 0 && typeof result.output === 'string' ? result.output.slice(0, 500) : undefined;
  const record: { -readonly [K in keyof CallRecord]: CallRecord[K] } = {
    turnId,
    callId: call.id,
    tool: call.name,
    input: inputJson(facts.input),
    decision: facts.decision,
    source: facts.source,
    outcome,
    durationMs: facts.durationMs,
    attempts: facts.attempts,
  };
  if (reason !== undefined) record.reason = reason;
  if (!isEmpty(context)) record.context = context;
  return record;
}

function isEmpty(object: JsonObject): boolean {
  for (const key in object) if (Object.hasOwn(object, key)) return false;
  return true;
}

/** Hands a record to the dispatcher's `onRecord` and the caller's; an observer that throws loses the record, never a result. */
export function emitRecord(onRecord: ((record: CallRecord) => void) | undefined, turn: Turn, record: CallRecord): void {
  tell(onRecord, record);
  tell(turn.onRecord, record);
}

function tell(observer: ((record: CallRecord) => void) | undefined, record: CallRecord): void {
  if (observer === undefined) return;
  try {
    observer(record);
  } catch {
    // An audit sink that fails must not lose a tool result; the record is dropped for it.
  }
}
