// Approvals: asking the `approve` callback about parked calls, and telling the dispatcher what was
// decided (each call's final audit record, and the grant of an "approve and remember").

import { errorMessage, readDecision } from '@turnkit/core/internal';
import {
  decisionsTaken,
  undecided,
  type ApprovalDecision,
  type ParkedCall,
  type ToolCall,
  type TurnEvent,
  type TurnState,
} from '@turnkit/core';
import type { Dispatcher } from '@turnkit/dispatch';
import type { DispatchContext, ParkedOutcome } from '@turnkit/dispatch/internal';
import type { ApproveFn, UndecidedPolicy } from './types.js';

const EXPIRED = 'approval expired';

/** True for `{ type: 'approve', remember? }` and `{ type: 'reject', reason? }`: core's own reading of a decision. */
export function isDecision(value: unknown): value is ApprovalDecision {
  return readDecision(value) !== null;
}

/**
 * Rejections `askApproval` made on nobody's behalf, per event it returned: a call the callback left
 * out (`expired`) or every open call when the callback failed (`approve_failed`). `recordTaken`
 * records those with their own source instead of as a person's rejection.
 */
const madeHere = new WeakMap<TurnEvent, ReadonlyMap<string, ParkedOutcome>>();

/**
 * Tells the dispatcher about the decisions core took from `event` in `state` (core's
 * `decisionsTaken`: call it with the state the event was stepped from): a rejection's final
 * record now, an approval's when the call runs, the grant of an approve-and-remember (for the
 * turn, or the session of `scope`), and an expiry as `expired`. Every interpreter records
 * decisions here and nowhere else, so its records and grants follow what core accepted.
 */
export function recordTaken(dispatcher: Dispatcher, state: TurnState, event: TurnEvent, scope?: DispatchContext): void {
  const made = madeHere.get(event);
  for (const taken of decisionsTaken(state, event)) {
    const { call, decision } = taken;
    const own = decision.type === 'reject' ? made?.get(call.id) : undefined;
    record(dispatcher, call, taken.expired ? { type: 'expired' } : (own ?? decision), scope);
  }
}

function record(
  dispatcher: Dispatcher,
  call: ToolCall,
  decision: ApprovalDecision | ParkedOutcome,
  scope?: DispatchContext,
): void {
  try {
    dispatcher.recordDecision(call, decision, scope);
  } catch {
    // A dispatcher's audit trail must not break the turn; the decision itself still applies.
  }
}

/**
 * The final records of parked calls a cancel ended: those still undecided, and those approved
 * but not run (`notRun`: the approved calls of a batch whose execution the cancel pre-empted).
 */
export function recordCancelled(dispatcher: Dispatcher, state: TurnState, scope?: DispatchContext, reason?: string): void {
  const batch = state.batch;
  if (batch === null) return;
  for (const { call } of batch.parked) {
    const decision = Object.hasOwn(batch.decisions, call.id) ? batch.decisions[call.id] : undefined;
    if (decision?.type === 'reject') continue;
    record(dispatcher, call, reason === undefined ? { type: 'cancelled' } : { type: 'cancelled', reason }, scope);
  }
}

/** How `askApproval` treats the calls; all optional. */
export interface AskOptions {
  /** The dispatch context of the turn: grants of an approve-and-remember belong to its turn or session. */
  readonly scope?: DispatchContext;
  /** Calls the callback said to await (`{ type: 'await' }`): not asked again; the set grows as it answers. */
  readonly awaiting?: Set<string>;
  /** What a call the callback leaves out gets: `'expire'` (rejected, the default) or `'await'`. */
  readonly whenUndecided?: UndecidedPolicy;
  /** In a multi-agent turn, the agents from the root's to the one whose calls these are: the callback sees it. */
  readonly agentPath?: readonly string[];
}

type Answer = ApprovalDecision | { readonly type: 'await' } | { readonly type: 'expired' };

/** The callback's answer for one call: a decision, an await, or an expiry. */
function answerFor(given: Record<string, unknown>, callId: string, whenUndecided: UndecidedPolicy): Answer {
  const value = Object.hasOwn(given, callId) ? given[callId] : undefined;
  if ((value as { type?: unknown } | null)?.type === 'await') return { type: 'await' };
  const decision = readDecision(value);
  if (decision !== null) return decision;
  return whenUndecided === 'await' ? { type: 'await' } : { type: 'expired' };
}

/**
 * The event for a parked turn: asks `approve` once about the undecided calls it has not been told
 * to await. Per call it may approve, reject, or await (`{ type: 'await' }`: the call stays parked
 * for a decision from elsewhere, and the turn suspends once only awaited calls are left, `null`).
 * A call it leaves out expires, or awaits with `whenUndecided: 'await'`. An `approve` that throws
 * rejects them all with the error's message (fail closed), unless the turn was cancelled
 * meanwhile: then the error is rethrown and nothing is recorded (the cancel records them).
 */
export async function askApproval(
  approve: ApproveFn,
  state: TurnState,
  cancelled: () => boolean = () => false,
  options: AskOptions = {},
): Promise<TurnEvent | null> {
  const awaiting = options.awaiting ?? new Set<string>();
  const path = options.agentPath;
  const waiting = path === undefined ? undecided(state) : undecided(state).map((p) => ({ ...p, agentPath: path }));
  const open = waiting.filter((p) => !awaiting.has(p.call.id));
  if (open.length === 0) return null;
  let answer: unknown;
  try {
    answer = await approve(open, path === undefined ? { turnId: state.id } : { turnId: state.id, agentPath: path });
  } catch (error) {
    // The person quit and the turn was cancelled: nobody decided, so nothing is recorded as a
    // decision; the caller turns the cancellation into `cancel`.
    if (cancelled()) throw error;
    return failedApproval(open, `the approve callback failed (${errorMessage(error)})`);
  }
  // A decision that arrives after the turn was cancelled decides nothing, and grants nothing.
  if (cancelled()) throw new Error('the turn was cancelled while the approve callback ran');
  const given = answer !== null && typeof answer === 'object' ? (answer as Record<string, unknown>) : {};
  const decided: [string, ApprovalDecision][] = [];
  const expired = new Map<string, ParkedOutcome>();
  for (const { call } of open) {
    const final = answerFor(given, call.id, options.whenUndecided ?? 'expire');
    if (final.type === 'await') {
      awaiting.add(call.id);
      continue;
    }
    if (final.type === 'expired') expired.set(call.id, final);
    decided.push([call.id, final.type === 'expired' ? { type: 'reject', reason: EXPIRED } : final]);
  }
  // Core's `approval_expired` expires every undecided call: only when none is awaited.
  if (expired.size === open.length && open.length === waiting.length) return { type: 'approval_expired' };
  if (decided.length === 0) return null;
  // fromEntries defines own properties: a call id such as `__proto__` is a plain key.
  const event: TurnEvent = { type: 'approvals_decided', decisions: Object.fromEntries(decided) };
  if (expired.size > 0) madeHere.set(event, expired);
  return event;
}

/** Every open call rejected because the callback failed: `recordTaken` records them as `approve_failed`. */
function failedApproval(open: readonly ParkedCall[], reason: string): TurnEvent {
  const decisions = Object.fromEntries(open.map(({ call }): [string, ApprovalDecision] => [call.id, { type: 'reject', reason }]));
  const event: TurnEvent = { type: 'approvals_decided', decisions };
  madeHere.set(event, new Map(open.map(({ call }) => [call.id, { type: 'approve_failed', reason }])));
  return event;
}
