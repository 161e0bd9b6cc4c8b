// `resume(state, completed? | options)` for every status (docs/turn-contract.md, "Resume"). Without a
// journal a resumed turn never re-runs a tool: no such resume issues dispatch_tools or
// execute_approved, and a call of the batch in flight without a completed result gets an
// `interrupted` result. A durable interpreter's resume issues the batch again for its journal.
import { describe, expect, it } from 'vitest';
import { parseTurnState, resume, step } from '@turnkit/core';
import type { Effect, TurnState } from '@turnkit/core';
import {
  call,
  callingModel,
  dispatching,
  drive,
  ev,
  finalizing,
  fx,
  newTurn,
  ok,
  outcome,
  steering,
  synth,
  TEXT,
  usage,
} from './helpers.js';

/** A resume after the state went to disk and back. */
const resumeFromDisk = (state: TurnState, completed?: Parameters<typeof resume>[1]) =>
  resume(parseTurnState(JSON.stringify(state)), completed);

const neverRunsTools = (effects: Effect[]) =>
  expect(effects.filter((e) => e.type === 'dispatch_tools' || e.type === 'execute_approved')).toEqual([]);

describe('resume', () => {
  it('ready: no effects, the same state', () => {
    const state = newTurn();
    const [next, effects] = resume(state);
    expect(next).toBe(state);
    expect(effects).toEqual([]);
  });

  it('calling_model: re-issues the last call_llm and counts it again', () => {
    const state = callingModel();
    const [next, effects] = resumeFromDisk(state);
    expect(effects).toEqual([fx.callModel(1, false)]);
    expect(next.status).toBe('calling_model');
    expect(next.usage.modelCalls).toBe(2);
  });

  it('calling_model: a forced final call is re-issued as final, an override is kept', () => {
    const forced = drive(steering([call('a')], { maxIterations: 1 }), ev.compacted())[0];
    expect(resume(forced)[1]).toEqual([fx.callModel(2, true)]);
    const a = call('a');
    const overridden = drive(dispatching([a]), ev.completed([{ ...ok(a), modelOverride: 'big' }]), ev.compacted())[0];
    expect(resumeFromDisk(overridden)[1]).toEqual([fx.callModel(2, false, 'big')]);
  });

  it('dispatching: completed results are kept, every other pending call is interrupted, then the batch goes on', () => {
    const a = call('a');
    const b = call('b', 'fetch');
    const c = call('c');
    const state = dispatching([a, b, c]);
    const [next, effects] = resumeFromDisk(state, [ok(c), ok(a)]);
    expect(effects).toEqual([
      fx.result(ok(a)),
      fx.result(synth(b, TEXT.interrupted)),
      fx.result(ok(c)),
      fx.emit('steering', { round: 1 }),
      fx.persist('boundary'),
      fx.compact(1, usage({ modelCalls: 1, toolCalls: 3 })),
    ]);
    expect(next.status).toBe('steering');
    expect(next.round).toBe(1);
    expect(next.batch).toBeNull();
    neverRunsTools(effects);
  });

  it('dispatching without completed results: every call is interrupted (none re-run)', () => {
    const a = call('a');
    const [, effects] = resume(dispatching([a]));
    expect(effects.slice(0, 1)).toEqual([fx.result(synth(a, TEXT.interrupted))]);
    neverRunsTools(effects);
  });

  it('dispatching: results for unknown ids are ignored, the first of duplicates wins', () => {
    const a = call('a');
    const [, effects] = resume(dispatching([a]), [ok(call('zz')), ok(a, 'first'), ok(a, 'second')]);
    expect(effects[0]).toEqual(fx.result(ok(a, 'first')));
  });

  it('dispatching: a completed result with a hook stop ends the turn', () => {
    const a = call('a');
    const b = call('b');
    const stop = { ...ok(a), stop: { reason: 'budget hook' } };
    const [next, effects] = resume(dispatching([a, b]), [stop]);
    expect(effects).toEqual([
      fx.result(stop),
      fx.result(synth(b, TEXT.interrupted)),
      fx.done(outcome.stopped('hook_stopped', 'budget hook')),
    ]);
    expect(next.status).toBe('stopped');
  });

  it('dispatching: a completed result is appended with the name of its call', () => {
    const a = call('a', 'search');
    const [, effects] = resume(dispatching([a]), [{ ...ok(a), name: 'other' }]);
    expect(effects[0]).toEqual(fx.result(ok(a)));
  });

  it('awaiting_approval (nothing executing): re-emits awaiting_approval, the state unchanged', () => {
    const h = call('h');
    const a = call('a', 'delete', {});
    const state = drive(dispatching([h, a]), ev.parked([ok(h)], [{ call: a, reason: 'deletes' }]), ev.decided({}))[0];
    const [next, effects] = resumeFromDisk(state);
    expect(effects).toEqual([fx.emit('awaiting_approval', { pending: [{ call: a, input: a.input, reason: 'deletes' }] })]);
    expect(next).toEqual(state);
  });

  it('executing_approved: held results and denials kept, completed kept, the rest interrupted', () => {
    const h = call('h');
    const a = call('a', 'delete', {});
    const b = call('b', 'pay', {});
    const c = call('c', 'mail', {});
    const state = drive(
      dispatching([h, a, b, c]),
      ev.parked([ok(h)], [{ call: a }, { call: b }, { call: c }]),
      ev.decided({ a: { type: 'approve' }, b: { type: 'reject', reason: 'no' }, c: { type: 'approve' } }),
    )[0];
    expect(state.status).toBe('executing_approved');
    const [next, effects] = resumeFromDisk(state, [{ ...ok(c), name: 'renamed' }]);
    expect(effects).toEqual([
      fx.result(ok(h)),
      fx.result(synth(a, TEXT.interrupted)),
      fx.result(synth(b, TEXT.rejected('no'))),
      fx.result(ok(c)),
      fx.emit('steering', { round: 1 }),
      fx.persist('boundary'),
      fx.compact(1, usage({ modelCalls: 1, toolCalls: 4 })),
    ]);
    expect(next.status).toBe('steering');
    expect(next.batch).toBeNull();
    neverRunsTools(effects);
  });

  it('steering: re-issues compact', () => {
    const state = steering([call('a')]);
    const [next, effects] = resumeFromDisk(state);
    expect(effects).toEqual([fx.compact(1, usage({ modelCalls: 1, toolCalls: 1 }))]);
    expect(next).toEqual(state);
  });

  it('finalizing: re-issues check_output with the candidate', () => {
    const state = finalizing('Paris.');
    const [next, effects] = resumeFromDisk(state);
    expect(effects).toEqual([fx.check('Paris.')]);
    expect(next).toEqual(state);
  });

  it.each<[string, () => TurnState]>([
    ['stopped', () => drive(finalizing(), ev.accepted('x'))[0]],
    ['failed', () => drive(newTurn(), { type: 'bogus' })[0]],
    ['cancelled', () => drive(dispatching([call('a')]), ev.cancel())[0]],
  ])('%s: no effects, the same state', (status, make) => {
    const state = make();
    expect(state.status).toBe(status);
    const [next, effects] = resume(state, [ok(call('a'))]);
    expect(next).toBe(state);
    expect(effects).toEqual([]);
  });

  it('a resumed turn goes on with step as if it never stopped', () => {
    const a = call('a');
    const [resumed] = resumeFromDisk(dispatching([a]), [ok(a)]);
    const [, effects] = drive(resumed, ev.compacted(), ev.responded([], 'done'), ev.accepted('done'));
    expect(effects).toEqual([fx.done(outcome.stopped('completed', 'done'))]);
  });

  it('resume never throws: a broken state becomes a failed turn', () => {
    const [next, effects] = resume({ ...dispatching([call('a')]), batch: null } as unknown as TurnState);
    expect(next.status).toBe('failed');
    expect(effects.at(-1)?.type).toBe('done');
    expect(step(next, ev.compacted())[1]).toEqual([]);
  });
});

describe('resume for a durable interpreter ({ durable: true }): the batch in flight is issued again for its journal', () => {
  const parkedBoth = (): TurnState =>
    drive(
      dispatching([call('a', 'shell', { cmd: 'rm -rf /srv' }), call('b', 'shell', { cmd: 'ls' })]),
      ev.parked(
        [],
        [
          { call: call('a', 'shell', { cmd: 'rm -rf /srv' }), input: { cmd: 'rm -rf /srv --dry-run' } },
          { call: call('b', 'shell', { cmd: 'ls' }) },
        ],
      ),
    )[0];

  it('executing_approved: the approved calls with the input each parked with, never the model input', () => {
    const [executing] = step(parkedBoth(), ev.decided({ a: { type: 'approve' }, b: { type: 'reject' } }));
    const [next, effects] = resume(parseTurnState(JSON.stringify(executing)), { durable: true });
    expect(next.status).toBe('executing_approved');
    expect(effects).toEqual([{ type: 'execute_approved', calls: [call('a', 'shell', { cmd: 'rm -rf /srv --dry-run' })] }]);
  });

  it('dispatching: the batch calls as sent', () => {
    const calls = [call('a'), call('b')];
    expect(resume(dispatching(calls), { durable: true })[1]).toEqual([fx.dispatch(calls)]);
  });

  it('awaiting_approval: nothing to do and nothing re-emitted (the log has the notice)', () => {
    expect(resume(parkedBoth(), { durable: true })).toEqual([parkedBoth(), []]);
  });

  it('a waiting cancel comes first, closing every open call', () => {
    const [next, effects] = resume(parkedBoth(), { durable: true, cancel: 'stop it' });
    expect(next.status).toBe('cancelled');
    expect(effects.at(-1)).toEqual(fx.done(outcome.cancelled('stop it')));
  });

  it('ready: the turn is started with its input', () => {
    const [next, effects] = resume(newTurn(), { durable: true, input: 'hi' });
    expect(next.status).toBe('calling_model');
    expect(effects[0]).toEqual(fx.user('hi'));
  });

  it('retryWaited: a retry whose wait was spent elsewhere is re-issued without delayMs', () => {
    const [retrying] = step(callingModel({ modelRetryBackoffMs: 500 }), {
      type: 'model_failed',
      error: { kind: 'rate_limited', message: 'slow down', retryable: true },
    });
    expect(retrying.lastRequest?.delayMs).toBe(500);
    const [, effects] = resume(retrying, { durable: true, retryWaited: true });
    expect(effects).toEqual([{ type: 'call_llm', request: { iteration: 1, final: false, attempt: 1 } }]);
  });
});

describe('resume with a waiting cancel keeps the results the batch in flight reported', () => {
  it('a call that finished keeps its result; only the others are cancelled', () => {
    const calls = [call('a', 'add'), call('b', 'slow')];
    const [next, effects] = resume(dispatching(calls), { durable: true, cancel: 'stop', completed: [ok(call('a', 'add'), 3)] });
    expect(next.status).toBe('cancelled');
    const results = effects.flatMap((e) => (e.type === 'append' && e.message.role === 'tool' ? [e.message.result] : []));
    expect(results.map((r) => [r.callId, r.isError])).toEqual([
      ['a', false],
      ['b', true],
    ]);
  });
});
