// The shared vocabulary of interpreters: one definition each, used by inline, stream and testing.
import { describe, expect, it } from 'vitest';
import { cancelPreempts, decisionsTaken, dispatchOutcomeEvent, isBlocking, step, undecided } from '@turnkit/core';
import { formatPath } from '../src/interpreter.ts';
import type { Effect, TurnEvent } from '@turnkit/core';
import { call, dispatching, drive, ev, ok } from './helpers.js';

describe('isBlocking', () => {
  it('is true for the effects an event answers (done included) and narrows the type', () => {
    const effects: Effect[] = [
      { type: 'append', message: { role: 'user', content: 'hi' } },
      { type: 'emit', notice: { name: 'iteration', data: { iteration: 1 } } },
      { type: 'persist', checkpoint: 'boundary' },
      { type: 'call_llm', request: { iteration: 1, final: false } },
      { type: 'done', outcome: { status: 'cancelled', reason: 'x' } },
    ];
    expect(effects.map((e) => isBlocking(e))).toEqual([false, false, false, true, true]);
    const blocking = effects.filter(isBlocking);
    // Narrowed: `append` is not a member of the filtered type.
    expect(blocking.map((e) => e.type)).toEqual(['call_llm', 'done']);
  });
});

describe('dispatchOutcomeEvent', () => {
  const a = call('a');
  const b = call('b');
  it('is tools_completed when nothing parked, else tools_parked holding the results so far', () => {
    expect(dispatchOutcomeEvent({ results: [ok(a)], parked: [] })).toEqual({ type: 'tools_completed', results: [ok(a)] });
    expect(dispatchOutcomeEvent({ results: [ok(a)], parked: [{ call: b, reason: 'pays' }] })).toEqual({
      type: 'tools_parked',
      held: [ok(a)],
      parked: [{ call: b, reason: 'pays' }],
    });
  });
});

describe('cancelPreempts', () => {
  it('lets tool results through and replaces everything else, and nothing at all', () => {
    const through: TurnEvent[] = [
      { type: 'tools_completed', results: [] },
      { type: 'tools_parked', held: [], parked: [] },
      { type: 'approved_tools_completed', results: [] },
    ];
    for (const event of through) expect(cancelPreempts(event), event.type).toBe(false);
    const replaced: Array<TurnEvent | null> = [
      null,
      { type: 'model_responded', response: { text: '', toolCalls: [] } },
      { type: 'model_failed', error: { kind: 'x', message: 'y' } },
      { type: 'compacted' },
      { type: 'output_accepted', output: 'x' },
      { type: 'approval_expired' },
      { type: 'effect_failed', effect: 'dispatch_tools', error: { kind: 'x', message: 'y' } },
    ];
    for (const event of replaced) expect(cancelPreempts(event), event?.type ?? 'null').toBe(true);
  });
});

describe('undecided', () => {
  it('lists the parked calls without a decision, in call order', () => {
    const [h, a, b] = [call('h'), call('a'), call('b')];
    const parked = drive(dispatching([h, a, b]), ev.parked([ok(h)], [{ call: a }, { call: b }]))[0];
    expect(undecided(parked)).toEqual([
      { call: a, input: a.input },
      { call: b, input: b.input },
    ]);
    const partial = drive(parked, ev.decided({ b: { type: 'reject' } }))[0];
    expect(undecided(partial)).toEqual([{ call: a, input: a.input }]);
    expect(undecided(dispatching([h]))).toEqual([]);
  });
});

describe('formatPath', () => {
  it('reads like code: keys joined by dots, indexes in brackets, (root) for the value itself', () => {
    expect(formatPath(['items', 0, 'name'])).toBe('items[0].name');
    expect(formatPath([0, 'a'])).toBe('[0].a');
    expect(formatPath([])).toBe('(root)');
    expect(formatPath([Symbol('s')])).toBe('Symbol(s)');
  });

  it('cuts long keys and long paths', () => {
    expect(formatPath(['k'.repeat(100)])).toBe(`${'k'.repeat(60)}…`);
    const long = formatPath(Array.from({ length: 100 }, () => 'abcdef'));
    expect(long.length).toBe(201);
    expect(long.endsWith('…')).toBe(true);
  });
});

describe('decisionsTaken: the decisions step takes, for interpreters to record', () => {
  const parked = () =>
    drive(
      dispatching([call('a', 'deploy'), call('b', 'deploy')]),
      ev.parked([], [{ call: call('a', 'deploy'), input: { dry: true } }, { call: call('b', 'deploy') }]),
    )[0];

  it('valid decisions for undecided parked calls, the first per call, with the input that runs', () => {
    const event = {
      type: 'approvals_decided',
      decisions: { a: { type: 'approve', remember: 'tool' }, z: { type: 'approve' }, b: { type: 'maybe' } },
    };
    expect(decisionsTaken(parked(), event)).toEqual([
      { call: call('a', 'deploy'), input: { dry: true }, decision: { type: 'approve', remember: 'tool' } },
    ]);
  });

  it('a call already decided is not taken again', () => {
    const [half] = step(parked(), ev.decided({ a: { type: 'reject' } }));
    expect(decisionsTaken(half, ev.decided({ a: { type: 'approve' }, b: { type: 'approve' } })).map((t) => t.call.id)).toEqual([
      'b',
    ]);
  });

  it('approval_expired: every undecided call, rejected and marked expired', () => {
    const [half] = step(parked(), ev.decided({ a: { type: 'approve' } }));
    expect(decisionsTaken(half, { type: 'approval_expired' })).toEqual([
      {
        call: call('b', 'deploy'),
        input: call('b', 'deploy').input,
        decision: { type: 'reject', reason: 'approval expired' },
        expired: true,
      },
    ]);
  });

  it('nothing outside awaiting_approval, and nothing for another event or garbage', () => {
    expect(decisionsTaken(dispatching([call('a')]), ev.decided({ a: { type: 'approve' } }))).toEqual([]);
    expect(decisionsTaken(parked(), { type: 'cancel' })).toEqual([]);
    expect(decisionsTaken(parked(), 42)).toEqual([]);
  });
});
