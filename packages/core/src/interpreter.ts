// The pieces of interpreting a turn that every interpreter shares, written once: how a dispatch
// outcome becomes an event, when a cancel takes the place of the event in hand, which parked
// calls still wait for a decision, and how a validation issue's path reads. Pure functions over
// plain data; core imports nothing, so the dispatcher's outcome is typed by its shape.

import type { CallRecord, ParkedCall, ToolResult, TurnEvent, TurnState } from './types.js';

/** What a dispatcher answers for a batch: the results it has, and the calls it parked for approval. */
export interface DispatchOutcome {
  readonly results: readonly ToolResult[];
  readonly parked: readonly ParkedCall[];
}

/**
 * The event for a dispatcher's answer to `dispatch_tools`: `tools_parked` (the results so far are
 * held) when any call was parked, else `tools_completed`. `records`, the dispatcher's audit
 * records of the batch (its `onRecord`), ride along when there are any, so a trace keeps them.
 *
 * @example
 * const records: CallRecord[] = [];
 * const outcome = await dispatcher.dispatch(effect.calls, { ...ctx, onRecord: (r) => records.push(r) });
 * const event = dispatchOutcomeEvent(outcome, records);
 */
export function dispatchOutcomeEvent(
  outcome: DispatchOutcome,
  records: readonly CallRecord[] = [],
): Extract<TurnEvent, { type: 'tools_completed' | 'tools_parked' }> {
  const { results, parked } = outcome;
  const extra = records.length === 0 ? {} : { records };
  return parked.length > 0
    ? { type: 'tools_parked', held: results, parked, ...extra }
    : { type: 'tools_completed', results, ...extra };
}

/**
 * True when a cancelled turn feeds `cancel` instead of `event`. The one exception is an event that
 * carries tool results (`tools_completed`, `tools_parked`, `approved_tools_completed`): those
 * tools ran (or were stopped, and say so), so core records them first and the cancel follows at
 * the next blocking effect. No finished tool is ever reported as not run. `null` (nothing decided
 * a parked turn) is always pre-empted.
 *
 * @example
 * if (signal.aborted && cancelPreempts(event)) event = { type: 'cancel', reason: 'stopped by the user' };
 */
export function cancelPreempts(event: TurnEvent | null): boolean {
  return (
    event === null ||
    (event.type !== 'tools_completed' && event.type !== 'tools_parked' && event.type !== 'approved_tools_completed')
  );
}

/**
 * The parked calls of `state` that have no decision yet, in call order. A turn waiting on a child
 * turn (`delegating`) reports the child's (a decision for them goes to the parent, which passes it
 * down); in a multi-agent turn each carries `agentPath`, the agents from this turn's to the call's.
 */
export function undecided(state: TurnState): ParkedCall[] {
  return undecidedIn(state, []);
}

function undecidedIn(state: TurnState, above: readonly string[]): ParkedCall[] {
  const agents = state.agents;
  const path = agents === null ? above : [...above, agents.agent];
  if (state.status === 'delegating' && agents?.child != null) return undecidedIn(agents.child, path);
  const batch = state.batch;
  if (batch === null || state.status !== 'awaiting_approval') return [];
  const open = batch.parked.filter((p) => !Object.hasOwn(batch.decisions, p.call.id));
  return agents === null ? open : open.map((p) => ({ ...p, agentPath: path }));
}

/**
 * The turn of a tree that acts now: `state` itself, or, while it waits on a child turn, that
 * child's acting turn; with the agents from `state`'s down to it, and the `transfer_task` call ids
 * that lead there. An interpreter asks it which turn a parked tree waits in.
 */
export function activeTurn(state: TurnState): {
  readonly state: TurnState;
  readonly agentPath: readonly string[];
  readonly callPath: readonly string[];
} {
  let current = state;
  const agentPath: string[] = current.agents === null ? [] : [current.agents.agent];
  const callPath: string[] = [];
  while (current.status === 'delegating' && current.agents?.child != null) {
    const first = current.agents.delegations[0];
    if (first === undefined) break;
    callPath.push(first.callId);
    current = current.agents.child;
    if (current.agents !== null) agentPath.push(current.agents.agent);
  }
  return { state: current, agentPath, callPath };
}

const MAX_KEY = 60;
const MAX_PATH = 200;

/**
 * A validation issue's path as text: `items[0].name`, or `(root)` for an empty path. Keys longer
 * than 60 characters and paths longer than 200 are cut (`…`): a path may come from a model's input.
 *
 * @example
 * formatPath(['items', 0, 'name']); // 'items[0].name'
 */
export function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  let text = '';
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else {
      const name = String(key);
      text += `${text === '' ? '' : '.'}${name.length > MAX_KEY ? `${name.slice(0, MAX_KEY)}…` : name}`;
    }
    if (text.length > MAX_PATH) return `${text.slice(0, MAX_PATH)}…`;
  }
  return text;
}

/** The longest rejection reason the model sees; a longer one is cut with `…`. */
export const MAX_REJECTION_REASON = 200;

// C0 and C1 controls, and the bidirectional overrides and isolates that can hide or reorder text.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]+/g;

/**
 * A person's rejection reason as the model may see it: it is forwarded to the model verbatim, so
 * control characters are removed, whitespace runs become one space, and it is cut at
 * MAX_REJECTION_REASON characters.
 *
 * @example
 * cleanReason('no\u0007 way\n\n  ever'); // 'no way ever'
 */
export function cleanReason(reason: string): string {
  const text = reason.replace(CONTROL, ' ').replace(/\s+/g, ' ').trim();
  return text.length > MAX_REJECTION_REASON ? `${text.slice(0, MAX_REJECTION_REASON - 1)}…` : text;
}

/**
 * The output of a rejected call's error result, with the reason cleaned (`cleanReason`). A reason
 * that ends a sentence itself (`.`, `!`, `?`, `…`) gets no second full stop.
 */
export function rejectionText(reason?: string): string {
  const clean = reason === undefined ? '' : cleanReason(reason);
  return `${endSentence(clean === '' ? 'rejected' : `rejected: ${clean}`)} A person declined this call; do not retry it unchanged.`;
}

/** `text` with a full stop, unless it ends a sentence already (`.`, `!`, `?`, `…`). */
export function endSentence(text: string): string {
  return /[.!?…]$/.test(text) ? text : `${text}.`;
}
