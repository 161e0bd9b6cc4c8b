// Approvals: asking the `approve` callback about parked calls, and telling the dispatcher what was
// decided (its audit record, and the grant of an "approve and remember").

import {
  errorMessage,
  readDecision,
  undecided,
  type ApprovalDecision,
  type ToolCall,
  type TurnEvent,
  type TurnState,
} from '@turnkit/core';
import type { Dispatcher } from '@turnkit/dispatch';
import type { ApproveFn } from './types.js';

const EXPIRED = 'approval expired';

/** True for `{ type: 'approve', remember? }` and `{ type: 'reject', reason? }`: core's own reading of a decision. */
export function isDecision(value: unknown): value is ApprovalDecision {
  return readDecision(value) !== null;
}

/**
 * Tells the dispatcher about decisions core will accept (valid, for an undecided parked call):
 * one `user_approved`/`user_rejected` record each, and the grant of an approve-and-remember.
 */
export function recordDecisions(dispatcher: Dispatcher, state: TurnState, decisions: Record<string, unknown>): void {
  for (const { call } of undecided(state)) {
    if (!Object.hasOwn(decisions, call.id)) continue;
    const decision = decisions[call.id];
    if (isDecision(decision)) record(dispatcher, call, decision);
  }
}

function record(dispatcher: Dispatcher, call: ToolCall, decision: ApprovalDecision): void {
  try {
    dispatcher.recordDecision(call, decision);
  } catch {
    // A dispatcher's audit trail must not break the turn; the decision itself still applies.
  }
}

/**
 * The event for a parked turn: asks `approve` once about the undecided calls. A call it leaves
 * without a valid decision expires (rejected, reason `approval expired`); an `approve` that throws
 * rejects them all with the error's message (fail closed), unless the turn was cancelled meanwhile:
 * then the error is rethrown and no decision is recorded.
 */
export async function askApproval(
  approve: ApproveFn,
  state: TurnState,
  dispatcher: Dispatcher,
  cancelled: () => boolean = () => false,
): Promise<TurnEvent> {
  const open = undecided(state);
  let answer: unknown;
  try {
    answer = await approve(open, { turnId: state.id });
  } catch (error) {
    // The person quit and the turn was cancelled: nobody decided, so nothing is recorded as a
    // decision; the caller turns the cancellation into `cancel`.
    if (cancelled()) throw error;
    const reason = `the approve callback failed (${errorMessage(error)})`;
    answer = Object.fromEntries(open.map((p) => [p.call.id, { type: 'reject', reason }]));
  }
  const given = answer !== null && typeof answer === 'object' ? (answer as Record<string, unknown>) : {};
  const decisions: Record<string, ApprovalDecision> = {};
  for (const { call } of open) {
    const decision = Object.hasOwn(given, call.id) ? given[call.id] : undefined;
    const final: ApprovalDecision = isDecision(decision) ? decision : { type: 'reject', reason: EXPIRED };
    Object.defineProperty(decisions, call.id, { value: final, enumerable: true, writable: true, configurable: true });
    record(dispatcher, call, final);
  }
  if (
    open.every(
      ({ call }) => decisions[call.id]?.type === 'reject' && (decisions[call.id] as { reason?: string }).reason === EXPIRED,
    )
  ) {
    return { type: 'approval_expired' };
  }
  return { type: 'approvals_decided', decisions };
}
