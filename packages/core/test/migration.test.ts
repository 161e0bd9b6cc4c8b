// Version 1 states, saved by turnkit before version 2, read back by parseTurnState: each status a
// version 1 turn could be saved in migrates to the current shape, and a suspended turn saved by
// version 1 resumes and completes. The fixtures in fixtures/v1/ are plain JSON as version 1 wrote it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseTurnState, resume, step, TURN_STATE_VERSION, TurnStateError } from '@turnkit/core';
import type { Effect, Message, ToolCall, ToolResult, TurnState } from '@turnkit/core';
import { usage } from './helpers.js';

type Json = Record<string, unknown>;
const fixture = (name: string): Json =>
  JSON.parse(readFileSync(new URL(`fixtures/v1/${name}.json`, import.meta.url), 'utf8')) as Json;
const suspended = fixture('result-suspended');
const v1State = (name: string): Json =>
  name === 'result-suspended' || name === 'result-completed' ? (fixture(name).state as Json) : fixture(name);

const add = (id: string, a: number, b: number): ToolCall => ({ id, name: 'add', input: { a, b } });
const pay = (id: string, amount: number): ToolCall => ({ id, name: 'pay', input: { amount } });
const result = (call: ToolCall, output: string | number): ToolResult => ({
  callId: call.id,
  name: call.name,
  output,
  isError: false,
});
const c1 = add('call_1', 1, 2);
const c2 = pay('call_2', 5);
const parkedBatch = {
  calls: [c1, c2],
  notExecuted: [],
  held: [result(c1, 3)],
  parked: [{ call: c2, reason: "tool 'pay' needs approval" }],
};

function fieldOf(input: unknown): string | undefined {
  try {
    parseTurnState(input);
    return undefined;
  } catch (error) {
    if (error instanceof TurnStateError) return error.field;
    throw error;
  }
}

describe('version 1 fixtures migrate to the current version', () => {
  const expected: Array<[string, Partial<TurnState>]> = [
    ['calling_model', { status: 'calling_model', batch: null, lastRequest: { iteration: 1, final: false } }],
    ['dispatching', { status: 'dispatching', batch: { calls: [c1, c2], notExecuted: [], held: [], parked: [], decisions: {} } }],
    ['awaiting_approval', { status: 'awaiting_approval', batch: { ...parkedBatch, decisions: {} } }],
    [
      'awaiting_approval_executing',
      { status: 'executing_approved', batch: { ...parkedBatch, decisions: { call_2: { type: 'approve' } } } },
    ],
    ['steering', { status: 'steering', batch: null, round: 1 }],
    ['finalizing', { status: 'finalizing', batch: null, candidate: '3' }],
    ['stopped', { status: 'stopped', batch: null, outcome: { status: 'stopped', stopReason: 'completed', output: '3' } }],
    ['result-suspended', { status: 'awaiting_approval', batch: { ...parkedBatch, decisions: {} } }],
    ['result-completed', { status: 'stopped', batch: null }],
  ];

  it.each(expected)('%s', (name, shape) => {
    const old = v1State(name);
    expect(old.version).toBe(1);
    const state = parseTurnState(JSON.stringify(old));
    expect(state).toMatchObject({ ...shape, version: TURN_STATE_VERSION });
    expect(state.limits.maxCallsPerReply).toBe(32);
    expect(state.limits.loopRecoveries).toBe(0);
    expect(state.recoveries).toBe(0);
    // Exactly the current fields: nothing of version 1 is carried along.
    expect(Object.keys(state).sort()).toEqual(
      [
        'version',
        'id',
        'status',
        'limits',
        'round',
        'usage',
        'forced',
        'batch',
        'lastBatch',
        'repeats',
        'callIds',
        'repairs',
        'recoveries',
        'candidate',
        'nextModel',
        'lastRequest',
        'outcome',
        'agents',
      ].sort(),
    );
    // A migrated state is a valid current state: it reads back unchanged.
    expect(parseTurnState(JSON.parse(JSON.stringify(state)))).toEqual(state);
  });
});

describe('a suspended version 1 turn resumes and completes with core alone', () => {
  /** Feeds events one by one, checking each step's effects, and collects the appended messages. */
  function run(state: TurnState, steps: ReadonlyArray<[unknown, Effect[]]>): { state: TurnState; appended: Message[] } {
    const appended: Message[] = [];
    let current = state;
    for (const [event, effects] of steps) {
      const [next, got] = step(current, event);
      expect(got).toEqual(effects);
      for (const effect of got) if (effect.type === 'append') appended.push(effect.message);
      current = next;
    }
    return { state: current, appended };
  }

  const paid = result(c2, 'paid 5');
  const afterApproval: ReadonlyArray<[unknown, Effect[]]> = [
    [
      { type: 'approved_tools_completed', results: [paid] },
      [
        { type: 'append', message: { role: 'tool', result: result(c1, 3) } },
        { type: 'append', message: { role: 'tool', result: paid } },
        { type: 'emit', notice: { name: 'steering', data: { round: 1 } } },
        { type: 'persist', checkpoint: 'boundary' },
        { type: 'compact', info: { round: 1, usage: usage({ modelCalls: 1, toolCalls: 2 }) } },
      ],
    ],
    [
      { type: 'compacted' },
      [
        { type: 'emit', notice: { name: 'iteration', data: { iteration: 2 } } },
        { type: 'call_llm', request: { iteration: 2, final: false } },
      ],
    ],
    [
      { type: 'model_responded', response: { text: 'done', toolCalls: [] } },
      [
        { type: 'append', message: { role: 'assistant', content: 'done', toolCalls: [] } },
        { type: 'check_output', candidate: 'done' },
      ],
    ],
    [
      { type: 'output_accepted', output: 'done' },
      [{ type: 'done', outcome: { status: 'stopped', stopReason: 'completed', output: 'done' } }],
    ],
  ];

  it('approvals_decided, the approved call, then the rest of the turn', () => {
    const state = parseTurnState(suspended.state);
    const approve: [unknown, Effect[]] = [
      { type: 'approvals_decided', decisions: { call_2: { type: 'approve' } } },
      [
        { type: 'persist', checkpoint: 'dispatching' },
        { type: 'execute_approved', calls: [c2] },
      ],
    ];
    const { state: end, appended } = run(state, [approve, ...afterApproval]);
    expect(end.status).toBe('stopped');
    expect(end.batch).toBeNull();
    expect(end.usage).toEqual(usage({ modelCalls: 2, toolCalls: 2 }));
    // The saved transcript plus what the resumed turn appended: every call has its one result.
    expect([...(suspended.transcript as Message[]), ...appended]).toEqual([
      { role: 'system', content: 'You are a cashier.' },
      { role: 'user', content: 'Add then pay.' },
      { role: 'assistant', content: '', toolCalls: [c1, c2] },
      { role: 'tool', result: result(c1, 3) },
      { role: 'tool', result: paid },
      { role: 'assistant', content: 'done', toolCalls: [] },
    ]);
  });

  it('a version 1 state saved while the approved call ran: resume keeps its result, then the turn goes on', () => {
    const state = parseTurnState(fixture('awaiting_approval_executing'));
    expect(state.status).toBe('executing_approved');
    const [next, effects] = resume(state, [paid]);
    expect(effects).toEqual(afterApproval[0]?.[1]);
    const { state: end } = run(next, afterApproval.slice(1));
    expect(end.outcome).toEqual({ status: 'stopped', stopReason: 'completed', output: 'done' });
  });

  it('decisions sent while the approved calls run are ignored, in a migrated state too', () => {
    const state = parseTurnState(fixture('awaiting_approval_executing'));
    const [next, effects] = step(state, { type: 'approvals_decided', decisions: { call_2: { type: 'reject' } } });
    expect(next).toBe(state);
    expect(effects).toEqual([
      {
        type: 'emit',
        notice: { name: 'ignored_event', data: { reason: 'approved calls are already executing', callIds: ['call_2'] } },
      },
    ]);
  });
});

describe('parseTurnState never silently accepts another shape', () => {
  /** The suspended fixture as read now: a version 2 state. */
  const v2 = (): Json => JSON.parse(JSON.stringify(parseTurnState(suspended.state))) as Json;

  it('a version 2 state without a field of its shape is refused, naming it', () => {
    const { recoveries: _r, ...withoutRecoveries } = v2();
    expect(fieldOf(withoutRecoveries)).toBe('recoveries');
  });

  it.each<[string, () => unknown, string]>([
    ['a version 1 state labelled version 2', () => ({ ...v1State('result-suspended'), version: 2 }), 'pending'],
    ['a version 2 state that kept seenCallIds', () => ({ ...v2(), seenCallIds: ['call_1'] }), 'seenCallIds'],
    ['a version 2 state with notExecuted outside the batch', () => ({ ...v2(), notExecuted: [] }), 'notExecuted'],
    ['a version 2 state with executing', () => ({ ...v2(), executing: null }), 'executing'],
    ['a version 2 batch with pending', () => ({ ...v2(), batch: { ...(v2().batch as Json), pending: [] } }), 'batch.pending'],
  ])('%s -> TurnStateError naming the field', (_name, make, field) => {
    expect(fieldOf(make())).toBe(field);
    expect(() => parseTurnState(make())).toThrow(`'${field}' is not a field of a version ${TURN_STATE_VERSION} state`);
  });

  it.each<[string, () => unknown, string]>([
    ['a version 1 state without a batch that holds calls', () => ({ ...v1State('steering'), pending: [c1] }), 'pending'],
    [
      'a version 1 state without a batch that holds decisions',
      () => ({ ...v1State('finalizing'), decisions: { call_1: { type: 'approve' } } }),
      'decisions',
    ],
    [
      'a version 1 state without a batch that is executing',
      () => ({ ...v1State('stopped'), executing: ['call_1'] }),
      'executing',
    ],
    ['a version 1 state missing its held results', () => ({ ...v1State('steering'), held: undefined }), 'held'],
    [
      'version 1 executing calls that were not approved',
      () => ({ ...v1State('awaiting_approval_executing'), executing: ['call_1'] }),
      'executing',
    ],
    ['version 1 executing while dispatching', () => ({ ...v1State('dispatching'), executing: ['call_2'] }), 'executing'],
    ['version 1 executing with a number', () => ({ ...v1State('awaiting_approval_executing'), executing: [2] }), 'executing'],
  ])('migration refuses what it would lose: %s', (_name, make, field) => {
    expect(fieldOf(make())).toBe(field);
  });
});
