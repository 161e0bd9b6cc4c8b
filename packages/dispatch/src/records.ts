// The audit trail, built by pure functions and handed to its observers in one place,
// `emitRecords`: a decision record per decision (`onDecision`), from a call's admitted verdict or a
// person's decision, and a call record (`onRecord`, and the caller's) per call that got a result
// from `dispatch` or `executeApproved`, from what the pipeline knows when its result is final.
//
// Every call gets exactly one final record (any decision but `ask`). A call that parks gets an
// `ask` record first, then its final one: `user_rejected`, or a `deny` for an expired approval
// (`approval_expired`), a failed approve callback (`approve_failed`) or a cancel (`cancelled`)
// when that happens; `user_approved` when the approved call reaches `executeApproved`, unless a
// deny rule in force then stops it (a `deny` naming the rule).

import type { ApprovalDecision, CallRecord, JsonValue, ToolCall, ToolResult } from '@turnkit/core';
import { cleanReason, definedProps, type JsonObject } from '@turnkit/core/internal';
import { toJsonValue } from './shape.js';
import type { DecisionRecord, ParkedOutcome, Verdict } from './types.js';

/** The source of a decision given up front (`DispatchContext.decisions`). */
export const UP_FRONT = 'user:up_front';

/** A source that says a person decided: `user`, `user:remember_tool`, `user:up_front`, … */
const isUserSource = (source: string): boolean => source === 'user' || source.startsWith('user:');

/** The record of one dispatched call, from its verdict after the budget pre-check (stages 1–6). */
export function decisionRecord(verdict: Verdict): DecisionRecord {
  switch (verdict.kind) {
    case 'deny': {
      const { callId, name, output } = verdict.result;
      return {
        callId,
        tool: name,
        decision: isUserSource(verdict.source) ? 'user_rejected' : 'deny',
        source: verdict.source,
        ...(typeof output === 'string' ? { reason: output.slice(0, 500) } : {}),
      };
    }
    case 'needs_approval':
      return {
        callId: verdict.call.id,
        tool: verdict.call.name,
        decision: 'ask',
        source: verdict.source,
        reason: verdict.reason,
      };
    case 'execute':
      return {
        callId: verdict.call.id,
        tool: verdict.call.name,
        decision: isUserSource(verdict.source) ? 'user_approved' : 'allow',
        source: verdict.source,
      };
  }
}

/** The source of a person's approval: `user`, or `user:remember_<scope>` for an approve-and-remember. */
export function approvalSource(decision: Extract<ApprovalDecision, { type: 'approve' }>): string {
  return decision.remember === undefined ? 'user' : `user:remember_${decision.remember}`;
}

/**
 * The final record of a parked call that ended without running: a person's rejection, or how it
 * ended without one. Throws a TypeError on a value that is none of these.
 */
export function closingRecord(
  call: ToolCall,
  outcome: Exclude<ApprovalDecision | ParkedOutcome, { type: 'approve' }>,
): DecisionRecord {
  const base = { callId: call.id, tool: call.name };
  switch (outcome.type) {
    case 'reject':
      return {
        ...base,
        decision: 'user_rejected',
        source: 'user',
        ...definedProps({ reason: outcome.reason === undefined ? undefined : cleanReason(outcome.reason) }),
      };
    case 'expired':
      return { ...base, decision: 'deny', source: 'approval_expired', reason: 'no decision came before the approval expired' };
    case 'approve_failed':
      return { ...base, decision: 'deny', source: 'approve_failed', reason: cleanReason(String(outcome.reason)) };
    case 'cancelled':
      return {
        ...base,
        decision: 'deny',
        source: 'cancelled',
        reason: outcome.reason === undefined ? 'the turn was cancelled while the call waited' : cleanReason(outcome.reason),
      };
    default:
      throw new TypeError(
        `recordDecision for call '${String(call?.id)}' needs { type: 'approve' | 'reject' | 'expired' | 'approve_failed' | 'cancelled' }, got ${String((outcome as { type?: unknown }).type)}.`,
      );
  }
}

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

/** The call record of one call. `context` is the turn's caller-supplied context, left out when empty. */
export function callRecord(turnId: string, context: JsonObject, facts: RecordFacts): CallRecord {
  const { call, result } = facts;
  const outcome = result.isError ? (result.errorKind ?? 'tool_error') : 'ok';
  const reason =
    result.isError && facts.attempts === 0 && typeof result.output === 'string' ? result.output.slice(0, 500) : undefined;
  return {
    turnId,
    callId: call.id,
    tool: call.name,
    input: inputJson(facts.input),
    decision: facts.decision,
    source: facts.source,
    outcome,
    durationMs: facts.durationMs,
    attempts: facts.attempts,
    ...definedProps({ reason }),
    ...(Object.keys(context).length === 0 ? {} : { context }),
  };
}

/** Hands the records to an observer in order. An observer that throws loses the record, never a result. */
export function emitRecords<R>(observer: ((record: R) => void) | undefined, records: readonly R[]): void {
  if (observer === undefined) return;
  for (const record of records) {
    try {
      observer(record);
    } catch {
      // An audit sink that fails must not lose a tool result; the record is dropped.
    }
  }
}
