// The cross-field invariants of a turn state: what `step` always keeps true between the fields of
// the batch in flight. `parseTurnState` refuses a state that breaks one (a state is data anyone
// could have edited, and resuming a broken one could run a rejected call, or one approval twice);
// the model checker (@turnkit/check) checks every state it reaches against the same function, so
// the two cannot drift.

import { sameJson } from './signature.js';
import type { JsonValue, TurnBatch, TurnState } from './types.js';

/** One broken invariant: the path of the field that breaks it, and what is wrong. */
export interface StateProblem {
  readonly field: string;
  readonly message: string;
}

/**
 * Every cross-field invariant `state` breaks, in a fixed order (empty when it is consistent). Reads
 * only fields whose shape is already checked (`parseTurnState` reads the shape first).
 *
 * @example
 * stateProblems(state); // [] for every state step produces
 */
export function stateProblems(state: TurnState): StateProblem[] {
  const problems: StateProblem[] = [];
  const bad = (field: string, message: string): void => void problems.push({ field, message });
  const { batch, status } = state;
  agentProblems(state, bad);
  if (batch === null) return problems;
  batchProblems(batch, status, bad, state);
  return problems;
}

/** A child turn runs exactly while the status is `delegating`, for the first delegation, and has not ended. */
function agentProblems(state: TurnState, bad: Report): void {
  const agents = state.agents;
  if (state.status !== 'delegating') {
    if (agents !== null && agents.delegations.length > 0)
      bad('agents.delegations', `must be empty while the status is ${state.status}`);
    if (agents !== null && agents.child !== null) bad('agents.child', `must be null while the status is ${state.status}`);
    return;
  }
  if (agents === null) return bad('agents', 'must be set while the status is delegating');
  if (agents.delegations.length === 0) bad('agents.delegations', 'must hold the calls waiting for a child turn');
  if (agents.child === null) return bad('agents.child', 'must be the child turn running while the status is delegating');
  const child = agents.child.status;
  if (child === 'stopped' || child === 'failed' || child === 'cancelled')
    bad('agents.child.status', `is ${child}, but an ended child turn is the call's result, not a running child`);
  if (child === 'ready') bad('agents.child.status', 'is ready, but a child turn starts when it is made');
}

type Report = (field: string, message: string) => void;

function batchProblems(batch: TurnBatch, status: TurnState['status'], bad: Report, state: TurnState): void {
  const { calls, notExecuted, held, parked, decisions } = batch;
  if (calls.length === 0) bad('batch.calls', `must hold the calls sent while the status is ${status}`);
  const sent = new Map<string, (typeof calls)[number]>();
  calls.forEach((call, i) => {
    if (sent.has(call.id)) bad(`batch.calls[${i}].id`, `repeats the call id '${call.id}'`);
    sent.set(call.id, call);
  });
  const skipped = new Set<string>();
  notExecuted.forEach((r, i) => {
    if (sent.has(r.callId) || skipped.has(r.callId))
      bad(`batch.notExecuted[${i}].callId`, `is '${r.callId}', a call that already has a place in the batch`);
    skipped.add(r.callId);
  });
  if (status === 'dispatching') {
    if (held.length > 0) bad('batch.held', 'must be empty while the status is dispatching (nothing has parked)');
    if (parked.length > 0) bad('batch.parked', 'must be empty while the status is dispatching (nothing has parked)');
    if (Object.keys(decisions).length > 0)
      bad('batch.decisions', 'must be empty while the status is dispatching (nothing has parked)');
    return;
  }
  if (status === 'delegating') {
    // Every sent call is either held (its result is in) or delegated (its child turn runs or waits), exactly once.
    if (parked.length > 0) bad('batch.parked', 'must be empty while the status is delegating (decisions are taken)');
    if (Object.keys(decisions).length > 0) bad('batch.decisions', 'must be empty while the status is delegating');
    const answered = new Set<string>();
    const answer = (id: string, path: string): void => {
      if (!sent.has(id)) bad(path, `is '${id}', not a call of the batch (batch.calls)`);
      if (answered.has(id)) bad(path, `answers the call '${id}' a second time`);
      answered.add(id);
    };
    held.forEach((r, i) => {
      answer(r.callId, `batch.held[${i}].callId`);
    });
    (state.agents?.delegations ?? []).forEach((d, i) => {
      answer(d.callId, `agents.delegations[${i}].callId`);
    });
    const open = calls.find((c) => !answered.has(c.id));
    if (open !== undefined) bad('batch.held', `has no result for the call '${open.id}', which is not delegated either`);
    return;
  }
  // Parked: every sent call is either held (it ran) or parked (it waits), exactly once.
  if (parked.length === 0) bad('batch.parked', `must hold the parked calls while the status is ${status}`);
  const answered = new Set<string>();
  const answer = (id: string, name: string, path: string): void => {
    const call = sent.get(id);
    if (call === undefined) bad(path, `is '${id}', not a call of the batch (batch.calls)`);
    else if (call.name !== name) bad(path, `answers the call '${id}' of tool '${call.name}' under the name '${name}'`);
    if (answered.has(id)) bad(path, `answers the call '${id}' a second time`);
    answered.add(id);
  };
  held.forEach((r, i) => {
    answer(r.callId, r.name, `batch.held[${i}].callId`);
  });
  parked.forEach((p, i) => {
    answer(p.call.id, p.call.name, `batch.parked[${i}].call.id`);
    const call = sent.get(p.call.id);
    // The call a person sees must be the call the model sent; only `input` may differ (a hook's rewrite).
    if (call !== undefined && !sameJson(call as unknown as JsonValue, p.call as unknown as JsonValue))
      bad(`batch.parked[${i}].call`, `differs from the call '${p.call.id}' that was sent (batch.calls)`);
    if (p.call.inputError !== undefined)
      bad(`batch.parked[${i}].call.inputError`, 'is set, but a call whose arguments were not JSON is never parked');
  });
  const unanswered = calls.find((c) => !answered.has(c.id));
  if (unanswered !== undefined) bad('batch.held', `has no result for the call '${unanswered.id}', which is not parked either`);
  const parkedIds = new Set(parked.map((p) => p.call.id));
  for (const callId of Object.keys(decisions))
    if (!parkedIds.has(callId)) bad(`batch.decisions.${callId}`, 'is a decision for a call that is not parked');
  const decided = parked.filter((p) => Object.hasOwn(decisions, p.call.id));
  if (status === 'awaiting_approval' && parked.length > 0 && decided.length === parked.length)
    bad(
      'batch.decisions',
      'decides every parked call, but no approved call is executing (the status would be executing_approved)',
    );
  if (status === 'executing_approved') {
    const undecided = parked.find((p) => !Object.hasOwn(decisions, p.call.id));
    if (undecided !== undefined)
      bad('batch.decisions', `has no decision for the parked call '${undecided.call.id}' while approved calls execute`);
    if (!parked.some((p) => decisions[p.call.id]?.type === 'approve'))
      bad('batch.decisions', 'approves no parked call, so none can be executing');
  }
}
