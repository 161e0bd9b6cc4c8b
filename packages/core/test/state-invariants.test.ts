// The cross-field invariants of a state, checked by parseTurnState (and by @turnkit/check with the
// same function): each state below is one that step can never produce, and resuming it used to run
// a rejected call, run one approval twice, or run a call nobody approved.
import { describe, expect, it } from 'vitest';
import { parseTurnState, resume, stateProblems, step, TURN_STATE_VERSION, TurnStateError, type TurnState } from '@turnkit/core';
import { readFileSync } from 'node:fs';
import { call, dispatching, drive, ev, ok } from './helpers.js';

const h = call('h');
const a = call('a', 'delete', { path: '/tmp/x' });
const b = call('b', 'pay', { amount: 5 });
/** A state awaiting approval of `a` and `b` (held: `h`), as step makes it. */
const parked = (): TurnState => drive(dispatching([h, a, b]), ev.parked([ok(h)], [{ call: a }, { call: b }]))[0];

function refused(state: unknown): { field: string; message: string } {
  try {
    parseTurnState(JSON.parse(JSON.stringify(state)));
  } catch (error) {
    if (error instanceof TurnStateError) return { field: error.field, message: error.message };
    throw error;
  }
  throw new Error('parseTurnState accepted a state step can never produce');
}

const withBatch = (state: TurnState, batch: Partial<NonNullable<TurnState['batch']>>, extra: Partial<TurnState> = {}) =>
  ({ ...state, ...extra, batch: { ...state.batch, ...batch } }) as TurnState;

describe('parseTurnState refuses states step never produces', () => {
  it('accepts what step produces, with no problem', () => {
    expect(stateProblems(parked())).toEqual([]);
    expect(parseTurnState(JSON.stringify(parked()))).toEqual(parked());
  });

  const cases: Array<[string, () => unknown, string, RegExp]> = [
    [
      'a decision for an id never parked',
      () => withBatch(parked(), { decisions: { h: { type: 'approve' } } }),
      'batch.decisions.h',
      /not parked/,
    ],
    [
      'every parked call decided while still awaiting approval (nothing executing)',
      () => withBatch(parked(), { decisions: { a: { type: 'approve' }, b: { type: 'approve' } } }),
      'batch.decisions',
      /decides every parked call/,
    ],
    [
      'a parked call that differs from the one sent',
      () =>
        withBatch(parked(), {
          parked: [
            { call: { ...a, input: { path: '/' } }, input: { path: '/' } },
            { call: b, input: b.input },
          ],
        }),
      'batch.parked[0].call',
      /differs from the call 'a' that was sent/,
    ],
    [
      'duplicate call ids',
      () => withBatch(parked(), { calls: [h, a, b, a] }, { usage: { ...parked().usage, toolCalls: 4 } }),
      'batch.calls[3].id',
      /repeats the call id 'a'/,
    ],
    [
      'the same call parked twice',
      () =>
        withBatch(parked(), {
          parked: [
            { call: a, input: a.input },
            { call: a, input: a.input },
            { call: b, input: b.input },
          ],
        }),
      'batch.parked[1].call.id',
      /a second time/,
    ],
    [
      'executing approved calls that were not approved',
      () =>
        withBatch(parked(), { decisions: { a: { type: 'reject' }, b: { type: 'reject' } } }, { status: 'executing_approved' }),
      'batch.decisions',
      /approves no parked call/,
    ],
    [
      'executing while a parked call is undecided',
      () => withBatch(parked(), { decisions: { a: { type: 'approve' } } }, { status: 'executing_approved' }),
      'batch.decisions',
      /no decision for the parked call 'b'/,
    ],
    [
      'awaiting approval with nothing parked',
      () => withBatch(parked(), { held: [ok(h), ok(a), ok(b)], parked: [] }),
      'batch.parked',
      /must hold the parked calls/,
    ],
    [
      'a held result under another tool name',
      () => withBatch(parked(), { held: [{ ...ok(h), name: 'pay' }] }),
      'batch.held[0].callId',
      /under the name 'pay'/,
    ],
    [
      'a not-executed result for a call of the batch',
      () => withBatch(parked(), { notExecuted: [ok(a)] }),
      'batch.notExecuted[0].callId',
      /already has a place/,
    ],
    [
      'a parked call without the input it runs with',
      () => withBatch(parked(), { parked: [{ call: a } as never, { call: b, input: b.input }] }),
      'batch.parked[0].input',
      /must be the JSON input that runs if approved/,
    ],
  ];

  it.each(cases)('%s', (_name, make, field, message) => {
    const problem = refused(make());
    expect(problem.field).toBe(field);
    expect(problem.message).toMatch(message);
  });

  it('a resumed state whose person rejected a call cannot be edited into running it', () => {
    const rejected = drive(parked(), ev.decided({ a: { type: 'reject', reason: 'no' } }))[0];
    // The edit: mark the whole batch executing, as if both were approved, keeping a's rejection.
    const edited = withBatch(
      rejected,
      { decisions: { a: { type: 'reject' }, b: { type: 'reject' } } },
      { status: 'executing_approved' },
    );
    expect(refused(edited).field).toBe('batch.decisions');
    // What step makes of the real state runs nothing a person rejected.
    const [, effects] = step(rejected, ev.decided({ b: { type: 'approve' } }));
    expect(effects.at(-1)).toEqual({ type: 'execute_approved', calls: [b] });
    expect(resume(rejected)[1]).toEqual([expect.objectContaining({ type: 'emit' })]);
  });
});

describe('version 2 states migrate to the current version', () => {
  const fixture = (name: string): Record<string, unknown> =>
    JSON.parse(readFileSync(new URL(`fixtures/v2/${name}.json`, import.meta.url), 'utf8')) as Record<string, unknown>;

  it.each(['awaiting_approval', 'executing_approved'])('%s: each parked call gains the input it was sent with', (name) => {
    const state = parseTurnState(fixture(name));
    expect(state.version).toBe(TURN_STATE_VERSION);
    // The calls of the batch in flight are the turn's known ids (migration 3 -> 4).
    expect(state.callIds.count).toBe(state.batch?.calls.length);
    for (const p of state.batch?.parked ?? []) expect(p.input).toEqual(p.call.input);
  });

  it('a suspended result saved by version 2 resumes: the approved call runs with its own input', () => {
    const state = parseTurnState((fixture('result-suspended') as { state: unknown }).state);
    const pending = state.batch?.parked ?? [];
    const decisions = Object.fromEntries(pending.map((p) => [p.call.id, { type: 'approve' as const }]));
    const [, effects] = step(state, { type: 'approvals_decided', decisions });
    expect(effects.at(-1)).toEqual({ type: 'execute_approved', calls: pending.map((p) => p.call) });
  });
});
