// Decision records: built from a call's admitted verdict (or a person's decision) by pure
// functions, and handed to `onDecision` in one place, `emitRecords`.

import type { ApprovalDecision, ToolCall } from '@turnkit/core';
import type { DecisionRecord, Verdict } from './types.js';
import { definedProps } from '@turnkit/core';

/** The record of one dispatched call, from its verdict after the budget pre-check (stages 1–6). */
export function decisionRecord(verdict: Verdict): DecisionRecord {
  switch (verdict.kind) {
    case 'deny': {
      const { callId, name, output } = verdict.result;
      return {
        callId,
        tool: name,
        decision: 'deny',
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
      return { callId: verdict.call.id, tool: verdict.call.name, decision: 'allow', source: verdict.source };
  }
}

/** The record of a person's decision on a parked call. Throws a TypeError on a malformed decision. */
export function userDecisionRecord(call: ToolCall, decision: ApprovalDecision): DecisionRecord {
  const type = (decision as { type?: unknown } | null)?.type;
  if (type !== 'approve' && type !== 'reject') {
    throw new TypeError(
      `recordDecision for call '${String(call?.id)}' needs { type: 'approve' | 'reject' }, got ${String(type)}.`,
    );
  }
  if (decision.type === 'approve') {
    const { remember } = decision;
    return {
      callId: call.id,
      tool: call.name,
      decision: 'user_approved',
      source: remember === undefined ? 'user' : `user:remember_${remember}`,
    };
  }
  return {
    callId: call.id,
    tool: call.name,
    decision: 'user_rejected',
    source: 'user',
    ...definedProps({ reason: decision.reason }),
  };
}

/** Hands the records to `onDecision` in order. A sink that throws loses the record, never a result. */
export function emitRecords(
  onDecision: ((record: DecisionRecord) => void) | undefined,
  records: readonly DecisionRecord[],
): void {
  if (onDecision === undefined) return;
  for (const record of records) {
    try {
      onDecision(record);
    } catch {
      // An audit sink that fails must not lose a tool result; the record is dropped.
    }
  }
}
