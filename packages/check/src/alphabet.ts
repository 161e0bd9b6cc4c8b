// A finite alphabet of concrete events per status: what an exhaustive exploration feeds the
// reducer. Call ids are derived from the state (`freshCallId`), so ids are fresh on every path;
// `reply_repeated_id` and `reply_missing_id` send ids a model server may send (repeated within the
// reply and across rounds, or none) on purpose, and `reply_bad_id` one core refuses.

import type { ParkedCall, ToolCall, ToolResult, TurnBatch, TurnEvent, TurnState } from '@turnkit/core';
import { ValueFingerprint } from './fingerprint.js';

/** `progress` events are plausible replies that move a turn on; `fatal` ones end it. */
export type EventKind = 'progress' | 'fatal';

/** An event of the alphabet with a short name that says what it stands for. */
export interface LabelledEvent {
  readonly label: string;
  readonly kind: EventKind;
  /** A `TurnEvent`, or a deliberately malformed object. */
  readonly event: TurnEvent | { readonly type: string; readonly [key: string]: unknown };
}

/** The one malformed event of the alphabet: `text` must be a string. */
export const MALFORMED_EVENT = { type: 'model_responded', response: { text: 42 } } as const;

const SEARCH: Omit<ToolCall, 'id'> = { name: 'search', input: { q: 'weather in Lisbon' } };
const READ: Omit<ToolCall, 'id'> = { name: 'read', input: { path: 'notes.txt', lines: [1, 20] } };

/** The concrete events the exploration tries from `state` (see `labelledEventsFor` for names). */
export function eventsFor(state: TurnState): LabelledEvent['event'][] {
  return labelledEventsFor(state).map((entry) => entry.event);
}

/** `eventsFor` with a label and kind per event. Events with identical JSON appear once. */
export function labelledEventsFor(state: TurnState): LabelledEvent[] {
  const out: LabelledEvent[] = [];
  const add = (label: string, kind: EventKind, event: LabelledEvent['event']): void => {
    out.push({ label, kind, event });
  };
  switch (state.status) {
    case 'ready':
      add('start', 'progress', { type: 'start', input: 'Plan a day in Lisbon.' });
      break;
    case 'calling_model':
      callingModel(state, add);
      break;
    case 'dispatching':
      dispatching(state, add);
      break;
    case 'awaiting_approval':
      deciding(state, add);
      break;
    case 'executing_approved':
      executing(state, add);
      break;
    case 'steering':
      add('compacted', 'progress', { type: 'compacted' });
      break;
    case 'finalizing':
      add('output_accepted', 'progress', { type: 'output_accepted', output: state.candidate ?? '' });
      add('output_rejected', 'progress', { type: 'output_rejected', reason: 'Answer with the day plan as a list.' });
      break;
    case 'stopped':
    case 'failed':
    case 'cancelled':
      // Terminal states absorb everything; two events are enough to check that they do.
      add('start', 'progress', { type: 'start', input: 'again' });
      break;
  }
  // Cancelling the batch in flight (not the turn): the turn goes on to the next model call.
  if (state.batch !== null) add('cancel_batch', 'progress', { type: 'cancel_batch', reason: 'user skipped these tools' });
  add('cancel', 'fatal', { type: 'cancel', reason: 'user pressed stop' });
  add('malformed', 'fatal', MALFORMED_EVENT);
  return dedupe(out);
}

type Add = (label: string, kind: EventKind, event: LabelledEvent['event']) => void;

/**
 * The id of call `i` of the reply to the model call in flight: its position in the turn
 * (`callIds.count + i + 1`), so no two calls of a turn share an id, and the ids a turn has kept
 * depend on how many calls it has had, not on which replies brought them (paths that differ only
 * in the replies' sizes meet again).
 */
export function freshCallId(state: TurnState, i: number): string {
  return `call-${state.callIds.count + i + 1}`;
}

/**
 * The usage a model reply of the alphabet reports: with a token or cost budget every reply spends
 * a little, so the budget is also reached (slowly); without one, none.
 */
export function replyUsage(limits: TurnState['limits']): { usage?: { inputTokens: number; outputTokens: number; cost: number } } {
  const budget = limits.budget;
  const spends =
    budget.maxInputTokens !== undefined ||
    budget.maxOutputTokens !== undefined ||
    budget.maxTotalTokens !== undefined ||
    budget.maxCost !== undefined;
  return spends ? { usage: { inputTokens: 40, outputTokens: 10, cost: 0.01 } } : {};
}

function callingModel(state: TurnState, add: Add): void {
  const id = (i: number): string => freshCallId(state, i);
  const usage = replyUsage(state.limits);
  const reply = (toolCalls: ToolCall[], text = ''): TurnEvent => ({
    type: 'model_responded',
    response: { text, toolCalls, ...usage },
  });

  add('reply_text', 'progress', reply([], 'Here is your plan.'));
  add('reply_one_call', 'progress', reply([{ id: id(0), ...SEARCH }]));
  add(
    'reply_two_calls',
    'progress',
    reply([
      { id: id(0), ...SEARCH },
      { id: id(1), ...READ },
    ]),
  );
  const previous = previousBatch(state);
  if (previous !== null) add('reply_repeated_batch', 'progress', reply(previous.map((call, i) => ({ id: id(i), ...call }))));
  const exempt = state.limits.loopExemptTools[0];
  if (exempt !== undefined) {
    add('reply_exempt_call', 'progress', reply([{ id: id(0), name: exempt, input: {} }]));
    add(
      'reply_exempt_and_search',
      'progress',
      reply([
        { id: id(0), name: exempt, input: {} },
        { id: id(1), ...SEARCH },
      ]),
    );
  }
  const budget = state.limits.budget;
  if (usage.usage !== undefined) {
    const big = Math.max(budget.maxInputTokens ?? 0, budget.maxOutputTokens ?? 0, budget.maxTotalTokens ?? 0) + 1;
    add('reply_over_budget', 'fatal', {
      type: 'model_responded',
      response: {
        text: '',
        toolCalls: [{ id: id(0), ...SEARCH }],
        usage: { inputTokens: big, outputTokens: big, cost: (budget.maxCost ?? 0) + 1 },
      },
    });
  }
  // Ids a model server does not keep unique: `call-1` twice in the reply, and (from the turn's
  // second call on) again in a later round; and a call without an id. Core derives their ids.
  add(
    'reply_repeated_id',
    'progress',
    reply([
      { id: 'call-1', ...SEARCH },
      { id: 'call-1', ...READ },
    ]),
  );
  add('reply_missing_id', 'progress', reply([{ id: '', ...SEARCH }]));
  add(
    'reply_bad_id',
    'fatal',
    reply([
      { id: id(0), ...SEARCH },
      { id: 'bad\u0007id', ...READ },
    ]),
  );
  add('model_failed', 'fatal', {
    type: 'model_failed',
    error: { kind: 'auth_failed', message: 'The API key was rejected.', retryable: false },
  });
  // Retried while limits.maxModelRetries and the model-call budget allow, else it ends the turn.
  add('model_failed_retryable', 'progress', {
    type: 'model_failed',
    error: { kind: 'rate_limited', message: 'Too many requests.', retryable: true },
  });
  add('model_failed_partial', 'fatal', {
    type: 'model_failed',
    error: { kind: 'rate_limited', message: 'Connection reset.', retryable: true },
    partialOutput: true,
  });
}

/** The last batch that counted for loop detection (name and input per call). */
function previousBatch(state: TurnState): Array<Omit<ToolCall, 'id'>> | null {
  return state.lastBatch === null ? null : state.lastBatch.map(({ name, input }) => ({ name, input }));
}

const ok = (call: ToolCall, extra: Partial<ToolResult> = {}): ToolResult => ({
  callId: call.id,
  name: call.name,
  output: `ok: ${call.name}`,
  isError: false,
  ...extra,
});

/** The batch of a status that has one (`dispatching`, `awaiting_approval`, `executing_approved`). */
function batchOf(state: TurnState): TurnBatch {
  if (state.batch === null) throw new Error(`a ${state.status} state without a batch`);
  return state.batch;
}

function dispatching(state: TurnState, add: Add): void {
  const { calls } = batchOf(state);
  add('tools_completed', 'progress', { type: 'tools_completed', results: calls.map((c) => ok(c)) });
  if (calls.length >= 2)
    add('tools_completed_reversed', 'progress', { type: 'tools_completed', results: calls.map((c) => ok(c)).reverse() });
  add('tools_completed_override', 'progress', {
    type: 'tools_completed',
    results: calls.map((c, i) => (i === 0 ? ok(c, { modelOverride: 'model-large' }) : ok(c))),
  });
  add('tools_completed_stop', 'fatal', {
    type: 'tools_completed',
    results: calls.map((c, i) => (i === 0 ? ok(c, { stop: { reason: 'hook says enough' } }) : ok(c))),
  });
  add('tools_incomplete', 'fatal', { type: 'tools_completed', results: calls.slice(0, -1).map((c) => ok(c)) });
  const park = (call: ToolCall): ParkedCall => ({ call, reason: `${call.name} needs approval` });
  add('tools_parked_all', 'progress', { type: 'tools_parked', held: [], parked: calls.map(park) });
  if (calls.length >= 2) {
    add('tools_parked_last', 'progress', {
      type: 'tools_parked',
      held: calls.slice(0, -1).map((c) => ok(c)),
      parked: calls.slice(-1).map(park),
    });
  }
}

function deciding(state: TurnState, add: Add): void {
  const { parked, decisions } = batchOf(state);
  const undecided = parked.map((p) => p.call.id).filter((id) => !Object.hasOwn(decisions, id));
  const decide = (entries: Array<[string, { type: 'approve' } | { type: 'reject'; reason: string }]>): TurnEvent => ({
    type: 'approvals_decided',
    decisions: Object.fromEntries(entries),
  });
  const approve = { type: 'approve' } as const;
  const reject = { type: 'reject', reason: 'not this one' } as const;
  add('approve_all', 'progress', decide(undecided.map((id) => [id, approve])));
  add('reject_all', 'progress', decide(undecided.map((id) => [id, reject])));
  if (undecided.length >= 2) {
    const [first, ...rest] = undecided as [string, ...string[]];
    add('approve_first_only', 'progress', decide([[first, approve]]));
    add(
      'approve_first_reject_rest',
      'progress',
      decide([[first, approve], ...rest.map((id): [string, typeof reject] => [id, reject])]),
    );
  }
  add('decide_unknown_id', 'progress', decide([['no-such-call', approve]]));
  add('approval_expired', 'progress', { type: 'approval_expired' });
}

function executing(state: TurnState, add: Add): void {
  // The calls running are the approved parked ones, in parked order (what execute_approved carried).
  const { parked, decisions } = batchOf(state);
  const calls = parked
    .filter((p) => Object.hasOwn(decisions, p.call.id) && decisions[p.call.id]?.type === 'approve')
    .map((p) => p.call);
  const ids = calls.map((c) => c.id);
  add('approved_completed', 'progress', { type: 'approved_tools_completed', results: calls.map((c) => ok(c)) });
  if (calls.length >= 2)
    add('approved_completed_reversed', 'progress', {
      type: 'approved_tools_completed',
      results: calls.map((c) => ok(c)).reverse(),
    });
  add('approved_incomplete', 'fatal', { type: 'approved_tools_completed', results: calls.slice(1).map((c) => ok(c)) });
  add('decide_while_executing', 'progress', {
    type: 'approvals_decided',
    decisions: Object.fromEntries(ids.map((id) => [id, { type: 'reject' }])),
  });
}

const eventHash = new ValueFingerprint({ reuse: false });
/** The fingerprints of the events kept so far by `dedupe` (hi, lo), made once. */
let keptHashes = new Int32Array(64);

/**
 * The events without repeats (identical JSON), the first of each kept. Compared by structural
 * fingerprint, and by JSON text only when two fingerprints are equal: the JSON text of every event
 * was 6% of an exploration's time (the profile of `maxIterations 3` with purity on 1 node in 16).
 * Two events of different `type` strings are never repeats and need no fingerprint: a state's
 * events of a type met once (every event of a terminal state's) are not hashed, and the
 * fingerprints kept are in one typed array made once. The alphabets of the 111,101 states of
 * maxIterations 3 took 198 ms instead of 261 (CPU, best of 7, load average about 5).
 */
function dedupe(events: LabelledEvent[]): LabelledEvent[] {
  const out: LabelledEvent[] = [];
  if (keptHashes.length < 2 * events.length) keptHashes = new Int32Array(4 * events.length);
  const hashes = keptHashes;
  const types = eventTypes;
  types.length = events.length;
  for (let at = 0; at < events.length; at++) types[at] = typeOf(events[at]!.event);
  for (let at = 0; at < events.length; at++) {
    const entry = events[at]!;
    const type = types[at];
    let shared = type === undefined;
    for (let j = 0; j < events.length && !shared; j++) shared = j !== at && types[j] === type;
    if (!shared) {
      // Its fingerprint is never compared: no other event has its type.
      hashes[2 * out.length] = 0;
      hashes[2 * out.length + 1] = 0;
      out.push(entry);
      continue;
    }
    eventHash.value(entry.event);
    const hi = eventHash.hi | 0;
    const lo = eventHash.lo | 0;
    let repeat = false;
    for (let i = 0; i < out.length && !repeat; i++)
      repeat =
        hashes[2 * i] === hi &&
        hashes[2 * i + 1] === lo &&
        typeOf(out[i]!.event) === type &&
        JSON.stringify(out[i]!.event) === JSON.stringify(entry.event);
    if (repeat) continue;
    hashes[2 * out.length] = hi;
    hashes[2 * out.length + 1] = lo;
    out.push(entry);
  }
  return out;
}

/** The `type` of each event given to `dedupe`, made once. */
const eventTypes: Array<string | undefined> = [];

/** An event's `type` when it is a string (the alphabet's events all have one), else undefined. */
function typeOf(event: unknown): string | undefined {
  if (event === null || typeof event !== 'object') return undefined;
  const type = (event as { type?: unknown }).type;
  return typeof type === 'string' ? type : undefined;
}
