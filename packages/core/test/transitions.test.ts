// One example per row of the transition table (docs/architecture.md, "The transition table"), each
// comparing the WHOLE effect list and the fields of the next state that the row is about.
import { describe, expect, it } from 'vitest';
import { approvalDeadline, createTurn, isTerminal, parseTurnState, step } from '@turnkit/core';
import type { CallRecord, ToolCall, TurnState } from '@turnkit/core';
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

const malformed = (problem: string) => outcome.failed('invalid_model_response', `The model's reply was malformed: ${problem}.`);
const unexpectedEvent = (status: string, event: string, problem: string) =>
  outcome.failed('unexpected_event', `The turn received an event it cannot handle: ${problem}.`, { status, event });

describe('ready', () => {
  it('start with input: appends the user message, announces the turn and its first iteration, calls the model', () => {
    const [next, effects] = step(newTurn(), ev.start('What is 2 + 3?'));
    expect(effects).toEqual([
      fx.user('What is 2 + 3?'),
      fx.emit('turn_started', { id: 't1' }),
      fx.emit('iteration', { iteration: 1 }),
      fx.callModel(1, false),
    ]);
    expect(next.status).toBe('calling_model');
    expect(next.usage).toEqual(usage({ modelCalls: 1 }));
    expect(next.lastRequest).toEqual({ iteration: 1, final: false });
  });

  it('start without input appends nothing', () => {
    const [next, effects] = step(newTurn(), ev.start());
    expect(effects).toEqual([
      fx.emit('turn_started', { id: 't1' }),
      fx.emit('iteration', { iteration: 1 }),
      fx.callModel(1, false),
    ]);
    expect(next.status).toBe('calling_model');
  });
});

describe('calling_model: model_responded, call identity (core gives every call of a turn its own id)', () => {
  it('an empty id gets a derived one (call~<position>); the reply runs', () => {
    const [next, effects] = step(callingModel(), ev.responded([call('a'), call('', 'fetch')]));
    const sent = [call('a'), { ...call('', 'fetch'), id: 'call~2' }];
    expect(effects).toEqual([fx.assistant('', sent), fx.persist('dispatching'), fx.dispatch(sent)]);
    expect(next.callIds.count).toBe(2);
  });

  it('an id repeated in the reply: the second call gets <id>~<position>, the model id kept as originalId', () => {
    const [next, effects] = step(callingModel(), ev.responded([call('a'), call('a', 'fetch')]));
    const sent = [call('a'), { ...call('a', 'fetch'), id: 'a~2', originalId: 'a' }];
    expect(effects).toEqual([fx.assistant('', sent), fx.persist('dispatching'), fx.dispatch(sent)]);
    expect(next.status).toBe('dispatching');
  });

  it('an id used in an earlier round gets a derived id: ids are unique in the turn', () => {
    const reused = [call('b'), call('a', 'fetch', {})];
    const [next, effects] = drive(steering([call('a')]), ev.compacted(), ev.responded(reused));
    const sent = [call('b'), { ...call('a', 'fetch', {}), id: 'a~3', originalId: 'a' }];
    expect(effects).toEqual([fx.assistant('', sent), fx.persist('dispatching'), fx.dispatch(sent)]);
    expect(next.status).toBe('dispatching');
  });

  it('a model id that looks derived (ends in ~<digits>) is derived again, so it cannot take a derived id', () => {
    const [, effects] = step(callingModel(), ev.responded([call('x~2')]));
    expect(effects.at(-1)).toEqual(fx.dispatch([{ ...call('x~2'), id: 'x~2~1', originalId: 'x~2' }]));
  });

  it('an originalId sent by the model is not kept: core sets that field', () => {
    const [, effects] = step(callingModel(), ev.responded([{ ...call('a'), originalId: 'forged' }]));
    expect(effects.at(-1)).toEqual(fx.dispatch([call('a')]));
  });

  it('the tokens of a bad reply still count', () => {
    const [next] = step(
      callingModel(),
      ev.responded([call('\n'), call('b')], '', { usage: { inputTokens: 7, outputTokens: 3 } }),
    );
    expect(next.usage).toEqual(usage({ modelCalls: 1, inputTokens: 7, outputTokens: 3, totalTokens: 10 }));
  });
});

describe('calling_model: a malformed response -> failed (invalid_model_response, naming the field)', () => {
  it.each([
    ['text not a string', { text: 5, toolCalls: [] }, 'response.text must be a string'],
    ['toolCalls not an array', { text: '', toolCalls: {} }, 'response.toolCalls must be an array'],
    [
      'a call whose id is not a string',
      { toolCalls: [{ id: 5, name: 'x', input: {} }] },
      'response.toolCalls[0].id must be a string',
    ],
    [
      'a call whose input is not JSON',
      { toolCalls: [{ id: 'a', name: 'x', input: { n: Number.NaN } }] },
      'response.toolCalls[0].input must be a JSON value (finite numbers, no cycles, at most 2000 levels deep)',
    ],
    ['negative usage', { text: 'hi', usage: { inputTokens: -1 } }, 'response.usage.inputTokens must be a whole number >= 0'],
    [
      'fractional tokens',
      { text: 'hi', usage: { outputTokens: 1.5 } },
      'response.usage.outputTokens must be a whole number >= 0',
    ],
    ['not an object', 'hello', 'response must be an object'],
  ])('%s', (_name, response, problem) => {
    const [next, effects] = step(callingModel(), { type: 'model_responded', response });
    expect(effects).toEqual([fx.done(malformed(problem))]);
    expect(next.status).toBe('failed');
  });

  it('missing text reads as "" and missing toolCalls as []', () => {
    const [next, effects] = step(callingModel(), { type: 'model_responded', response: {} });
    expect(effects).toEqual([fx.assistant(''), fx.check('')]);
    expect(next.status).toBe('finalizing');
  });

  it('a malformed response outside calling_model is an unexpected event', () => {
    const calls = [call('a')];
    const [, effects] = step(dispatching(calls), { type: 'model_responded', response: { text: 1 } });
    expect(effects).toEqual([
      fx.result(synth(calls[0]!, TEXT.unexpected)),
      fx.done(
        unexpectedEvent('dispatching', 'model_responded', "'model_responded' is not expected while the turn is dispatching"),
      ),
    ]);
  });
});

describe('calling_model: model_responded while a forced final call is pending -> finalizing', () => {
  it('at maxIterations the call is final (tools disabled) and tool calls in its reply are dropped before any id check', () => {
    const a = call('a');
    const [forcedState, forcedEffects] = drive(steering([a], { maxIterations: 1 }), ev.compacted());
    expect(forcedEffects).toEqual([fx.emit('limit_reached', { limit: 'max_iterations', round: 1 }), fx.callModel(2, true)]);
    expect(forcedState.forced).toBe('max_iterations');

    // Ids that would be invalid (reused 'a', empty '') are not looked at: the calls are dropped.
    const [next, effects] = step(forcedState, ev.responded([call('a'), call('')], 'best I can do'));
    expect(effects).toEqual([fx.assistant('best I can do', []), fx.check('best I can do')]);
    expect(next.status).toBe('finalizing');
    expect(next.candidate).toBe('best I can do');
    expect(next.usage.toolCalls).toBe(1);

    const [end, endEffects] = step(next, ev.accepted('best I can do'));
    expect(endEffects).toEqual([fx.done(outcome.stopped('max_iterations', 'best I can do'))]);
    expect(end.status).toBe('stopped');
  });
});

describe('calling_model: model_responded exceeding a token or cost budget -> stopped (budget_exhausted, output null)', () => {
  const a = call('a');
  const b = call('b', 'fetch');
  it.each([
    ['maxInputTokens', { maxInputTokens: 10 }, { inputTokens: 11 }, 'input token'],
    ['maxOutputTokens', { maxOutputTokens: 10 }, { outputTokens: 11 }, 'output token'],
    ['maxTotalTokens', { maxTotalTokens: 10 }, { inputTokens: 6, outputTokens: 5 }, 'total token'],
    ['maxTotalTokens (reported total)', { maxTotalTokens: 10 }, { totalTokens: 11 }, 'total token'],
    ['maxCost', { maxCost: 0.5 }, { cost: 0.75 }, 'cost'],
  ])('%s: appends the reply and a synthesised result for each of its calls', (_name, budget, used, what) => {
    const [next, effects] = step(callingModel({ budget }), ev.responded([a, b], 'thinking', { usage: used }));
    expect(effects).toEqual([
      fx.assistant('thinking', [a, b]),
      fx.result(synth(a, TEXT.budget(what))),
      fx.result(synth(b, TEXT.budget(what))),
      fx.done(outcome.stopped('budget_exhausted', null)),
    ]);
    expect(next.status).toBe('stopped');
    expect(next.usage.toolCalls).toBe(0);
  });

  it('a text-only reply over budget stops too (its text is not the output)', () => {
    const [, effects] = step(
      callingModel({ budget: { maxOutputTokens: 1 } }),
      ev.responded([], 'long answer', { usage: { outputTokens: 2 } }),
    );
    expect(effects).toEqual([fx.assistant('long answer'), fx.done(outcome.stopped('budget_exhausted', null))]);
  });

  it('usage equal to the budget is not over it (strict)', () => {
    const [next, effects] = step(
      callingModel({ budget: { maxInputTokens: 10, maxCost: 1 } }),
      ev.responded([a], '', { usage: { inputTokens: 10, cost: 1 } }),
    );
    expect(effects).toEqual([fx.assistant('', [a]), fx.persist('dispatching'), fx.dispatch([a])]);
    expect(next.status).toBe('dispatching');
  });

  it('usage accumulates across model calls', () => {
    const limits = { budget: { maxTotalTokens: 15 } };
    const first = drive(
      callingModel(limits),
      ev.responded([a], '', { usage: { totalTokens: 8 } }),
      ev.completed([ok(a)]),
      ev.compacted(),
    )[0];
    expect(first.usage.totalTokens).toBe(8);
    const [next, effects] = step(first, ev.responded([], 'done', { usage: { totalTokens: 8 } }));
    expect(effects).toEqual([fx.assistant('done'), fx.done(outcome.stopped('budget_exhausted', null))]);
    expect(next.usage.totalTokens).toBe(16);
  });
});

describe('calling_model: model_responded with no tool calls -> finalizing', () => {
  it('appends the reply (with its reasoning) and asks for an output check', () => {
    const [next, effects] = step(callingModel(), ev.responded([], 'Paris.', { reasoning: 'capital of France' }));
    expect(effects).toEqual([
      { type: 'append', message: { role: 'assistant', content: 'Paris.', toolCalls: [], reasoning: 'capital of France' } },
      fx.check('Paris.'),
    ]);
    expect(next.status).toBe('finalizing');
    expect(next.candidate).toBe('Paris.');
  });
});

describe('calling_model: model_responded with a batch identical to the previous loopThreshold - 1 -> forced final call', () => {
  const round = (state: TurnState, calls: ReturnType<typeof call>[]) =>
    drive(state, ev.responded(calls), ev.completed(calls.map((c) => ok(c))), ev.compacted())[0];

  it('skips the repeated batch, announces the loop, forces a final call; keys in another order count as identical', () => {
    const first = round(callingModel({ loopThreshold: 2 }), [call('a', 'search', { q: 'x', opts: { b: 1, a: 2 } })]);
    const again = call('b', 'search', { opts: { a: 2, b: 1 }, q: 'x' });
    const [next, effects] = step(first, ev.responded([again], 'once more'));
    expect(effects).toEqual([
      fx.assistant('once more', [again]),
      fx.result(synth(again, TEXT.skipped)),
      fx.emit('limit_reached', { limit: 'loop_detected', repeats: 2 }),
      fx.callModel(2, true),
    ]);
    expect(next.status).toBe('calling_model');
    expect(next.forced).toBe('loop_detected');
    expect(next.repeats).toBe(2);
    expect(next.round).toBe(1); // a skipped batch is not a tool round
    expect(next.usage).toEqual(usage({ modelCalls: 3, toolCalls: 1 })); // skipped calls are not counted

    const [end, endEffects] = drive(next, ev.responded([call('c')], 'summary'), ev.accepted('summary'));
    expect(endEffects).toEqual([fx.done(outcome.stopped('loop_detected', 'summary'))]);
    expect(end.status).toBe('stopped');
  });

  it('counts identical batches in a row, including the last, and a different batch resets the count', () => {
    let state = callingModel({ loopThreshold: 3 });
    state = round(state, [call('a1', 'search', { q: 1 })]);
    expect(state.repeats).toBe(1);
    state = round(state, [call('a2', 'search', { q: 1 })]);
    expect(state.repeats).toBe(2);
    state = round(state, [call('b1', 'search', { q: 2 })]);
    expect(state.repeats).toBe(1);
    state = round(state, [call('b2', 'search', { q: 2 })]);
    const [, effects] = step(state, ev.responded([call('b3', 'search', { q: 2 })]));
    expect(effects.at(-1)).toEqual(fx.callModel(5, true));
    expect(effects).toContainEqual(fx.emit('limit_reached', { limit: 'loop_detected', repeats: 3 }));
  });

  it('call order matters: the same calls in another order are a different batch', () => {
    const p = (id: string) => call(id, 'search', { q: 1 });
    const f = (id: string) => call(id, 'fetch', { u: 1 });
    const state = round(callingModel({ loopThreshold: 2 }), [p('a'), f('b')]);
    const [next, effects] = step(state, ev.responded([f('c'), p('d')]));
    expect(effects).toEqual([fx.assistant('', [f('c'), p('d')]), fx.persist('dispatching'), fx.dispatch([f('c'), p('d')])]);
    expect(next.repeats).toBe(1);
  });

  it('an all-exempt batch neither counts nor resets', () => {
    const limits = { loopThreshold: 2, loopExemptTools: ['status'] };
    const first = round(callingModel(limits), [call('a', 'search', { q: 1 })]);
    const batch = first.lastBatch;
    const afterExempt = round(first, [call('s1', 'status', {})]);
    expect(afterExempt.repeats).toBe(1);
    expect(afterExempt.lastBatch).toBe(batch);
    expect(afterExempt.round).toBe(2);

    const again = call('c', 'search', { q: 1 });
    const [next, effects] = step(afterExempt, ev.responded([again]));
    expect(effects).toEqual([
      fx.assistant('', [again]),
      fx.result(synth(again, TEXT.skipped)),
      fx.emit('limit_reached', { limit: 'loop_detected', repeats: 2 }),
      fx.callModel(3, true),
    ]);
    expect(next.forced).toBe('loop_detected');
  });

  it('identical all-exempt batches never loop', () => {
    let state = callingModel({ loopThreshold: 2, loopExemptTools: ['status'] });
    for (const id of ['s1', 's2', 's3']) state = round(state, [call(id, 'status', {})]);
    expect(state.status).toBe('calling_model');
    expect(state.forced).toBeNull();
    expect(state.repeats).toBe(0);
    expect(state.round).toBe(3);
  });

  it('in a mixed batch only the non-exempt calls make the signature, and the whole batch is skipped', () => {
    const limits = { loopThreshold: 2, loopExemptTools: ['status'] };
    const first = round(callingModel(limits), [call('a', 'search', { q: 1 }), call('s1', 'status', { n: 1 })]);
    const batch = [call('s2', 'status', { n: 2 }), call('b', 'search', { q: 1 })];
    const [, effects] = step(first, ev.responded(batch));
    expect(effects).toEqual([
      fx.assistant('', batch),
      fx.result(synth(batch[0]!, TEXT.skipped)),
      fx.result(synth(batch[1]!, TEXT.skipped)),
      fx.emit('limit_reached', { limit: 'loop_detected', repeats: 2 }),
      fx.callModel(2, true),
    ]);
  });

  it('loopThreshold 0 turns detection off', () => {
    let state = callingModel({ loopThreshold: 0 });
    for (const id of ['a', 'b', 'c', 'd']) state = round(state, [call(id, 'search', { q: 1 })]);
    expect(state.forced).toBeNull();
    expect(state.round).toBe(4);
    expect(state.repeats).toBe(4);
  });
});

describe('calling_model: a loop with limits.loopRecoveries left -> a nudge, and the model keeps its tools', () => {
  const round = (state: TurnState, calls: ReturnType<typeof call>[]) =>
    drive(state, ev.responded(calls), ev.completed(calls.map((c) => ok(c))), ev.compacted())[0];
  const limits = { loopThreshold: 2, loopRecoveries: 1 };

  it('skips the repeated batch, tells the model it is repeating itself, and calls it again with tools', () => {
    const first = round(callingModel(limits), [call('a', 'search', { q: 'x' })]);
    const again = call('b', 'search', { q: 'x' });
    const [next, effects] = step(first, ev.responded([again], 'once more'));
    expect(effects).toEqual([
      fx.assistant('once more', [again]),
      fx.result(synth(again, TEXT.skippedRecovered)),
      fx.user(TEXT.nudge(2)),
      fx.emit('limit_reached', { limit: 'loop_recovery', repeats: 2, recoveriesLeft: 0 }),
      fx.callModel(2, false),
    ]);
    expect(next).toMatchObject({ status: 'calling_model', forced: null, recoveries: 1, repeats: 1, round: 1 });
    expect(next.usage).toEqual(usage({ modelCalls: 3, toolCalls: 1 }));
    expect(parseTurnState(JSON.parse(JSON.stringify(next)))).toEqual(next);

    // The same batch once more is the next loop, and with no recovery left it forces the final call.
    const [forced, forcedEffects] = step(next, ev.responded([call('c', 'search', { q: 'x' })]));
    expect(forcedEffects.at(-1)).toEqual(fx.callModel(2, true));
    expect(forcedEffects).toContainEqual(fx.emit('limit_reached', { limit: 'loop_detected', repeats: 2 }));
    expect(forced).toMatchObject({ forced: 'loop_detected', recoveries: 1 });
  });

  it('a model that changes course after the nudge goes on normally', () => {
    const first = round(callingModel(limits), [call('a', 'search', { q: 'x' })]);
    const nudged = step(first, ev.responded([call('b', 'search', { q: 'x' })]))[0];
    const other = call('c', 'read', { path: 'notes' });
    const [next, effects] = step(nudged, ev.responded([other]));
    expect(effects.at(-1)).toEqual(fx.dispatch([other]));
    expect(next).toMatchObject({ status: 'dispatching', repeats: 1, recoveries: 1 });
  });

  it('loopRecoveries 0 (the default) forces the final call at once, as before', () => {
    const first = round(callingModel({ loopThreshold: 2 }), [call('a', 'search', { q: 'x' })]);
    const [next] = step(first, ev.responded([call('b', 'search', { q: 'x' })]));
    expect(next).toMatchObject({ forced: 'loop_detected', recoveries: 0 });
  });

  it('a recovery is a model call: maxModelCalls still bounds it', () => {
    const first = round(callingModel({ ...limits, budget: { maxModelCalls: 2 } }), [call('a', 'search', { q: 'x' })]);
    const [next, effects] = step(first, ev.responded([call('b', 'search', { q: 'x' })]));
    expect(next.status).toBe('stopped');
    expect(effects.at(-1)).toEqual(fx.done(outcome.stopped('budget_exhausted', null)));
  });

  it('limits.loopRecoveries must be an integer >= 0, and a saved state cannot claim more recoveries than it allows', () => {
    expect(() => newTurn({ loopRecoveries: -1 })).toThrow('limits.loopRecoveries must be an integer >= 0');
    expect(() => newTurn({ loopRecoveries: 1.5 })).toThrow('limits.loopRecoveries must be an integer >= 0');
    const state = JSON.parse(JSON.stringify(callingModel(limits))) as Record<string, unknown>;
    expect(() => parseTurnState({ ...state, recoveries: 2, usage: { ...(state.usage as object), modelCalls: 5 } })).toThrow(
      "'recoveries' is 2, past limits.loopRecoveries (1)",
    );
    expect(() => parseTurnState({ ...state, recoveries: 1 })).toThrow("'usage.modelCalls' is 1, fewer than the 2");
  });
});

describe('calling_model: model_responded with tool calls -> dispatching', () => {
  it('appends the reply, persists, then dispatches', () => {
    const calls = [call('a'), call('b', 'fetch', { url: 'x' })];
    const [next, effects] = step(callingModel(), ev.responded(calls, 'let me look'));
    expect(effects).toEqual([fx.assistant('let me look', calls), fx.persist('dispatching'), fx.dispatch(calls)]);
    expect(next.status).toBe('dispatching');
    expect(next.batch).toEqual({ calls, notExecuted: [], held: [], parked: [], decisions: {} });
    expect(next.usage).toEqual(usage({ modelCalls: 1, toolCalls: 2 }));
    expect(next.repeats).toBe(1);
  });
});

describe('calling_model: model_failed -> failed', () => {
  it('fails with the error as given', () => {
    const error = { kind: 'rate_limited', message: 'Too many requests; retry later.', retryable: true, data: { after: 3 } };
    const [next, effects] = step(callingModel({ maxModelRetries: 0 }), { type: 'model_failed', error });
    expect(effects).toEqual([fx.done({ status: 'failed', error })]);
    expect(next.status).toBe('failed');
    expect(next.outcome).toEqual({ status: 'failed', error });
  });
});

describe('dispatching: tools_completed with exactly the pending ids -> steering', () => {
  it('appends results in call order whatever order they arrive in, with the name of their call', () => {
    const a = call('a');
    const b = call('b', 'fetch');
    const c = call('c', 'read');
    const [next, effects] = step(dispatching([a, b, c]), ev.completed([ok(c), { ...ok(a), name: 'renamed' }, ok(b)]));
    expect(effects).toEqual([
      fx.result(ok(a)),
      fx.result(ok(b)),
      fx.result(ok(c)),
      fx.emit('steering', { round: 1 }),
      fx.persist('boundary'),
      fx.compact(1, usage({ modelCalls: 1, toolCalls: 3 })),
    ]);
    expect(next.status).toBe('steering');
    expect(next.round).toBe(1);
    expect(next.batch).toBeNull();
  });
});

describe('dispatching: tools_completed with a result carrying `stop` -> stopped (hook_stopped)', () => {
  it("appends every result, the output is the first stop's reason in call order", () => {
    const a = call('a');
    const b = call('b');
    const ra = { ...ok(a), stop: { reason: 'first in call order' } };
    const rb = { ...ok(b), stop: { reason: 'arrived first' } };
    const [next, effects] = step(dispatching([a, b]), ev.completed([rb, ra]));
    expect(effects).toEqual([fx.result(ra), fx.result(rb), fx.done(outcome.stopped('hook_stopped', 'first in call order'))]);
    expect(next.status).toBe('stopped');
    expect(next.batch).toBeNull();
  });
});

describe('dispatching: ids not matching -> failed (incomplete_batch)', () => {
  const b = call('b');
  const a = call('a');
  const c = call('c');
  const mismatch = outcome.failed(
    'incomplete_batch',
    'The tool batch did not match the calls that were sent: missing results for a, b; results for unknown calls y, z; more than one result for c.',
    { missing: ['a', 'b'], unexpected: ['y', 'z'], duplicated: ['c'] },
  );
  const synthesised = [
    fx.result(synth(b, TEXT.incomplete)),
    fx.result(synth(a, TEXT.incomplete)),
    fx.result(synth(c, TEXT.incomplete)),
  ];

  it('tools_completed: sorted missing/unexpected/duplicated ids; every pending call gets a synthesised result', () => {
    const z = call('z');
    const y = call('y');
    const [next, effects] = step(dispatching([b, a, c]), ev.completed([ok(c), ok(z), ok(c), ok(y)]));
    expect(effects).toEqual([...synthesised, fx.done(mismatch)]);
    expect(next.status).toBe('failed');
    expect(next.batch).toBeNull();
  });

  it('tools_parked: held and parked ids are checked together', () => {
    const [, effects] = step(dispatching([b, a, c]), ev.parked([ok(c), ok(call('z'))], [{ call: c }, { call: call('y') }]));
    expect(effects).toEqual([...synthesised, fx.done(mismatch)]);
  });

  it('only missing ids', () => {
    const [, effects] = step(dispatching([a, b]), ev.completed([ok(b)]));
    expect(effects).toEqual([
      fx.result(synth(a, TEXT.incomplete)),
      fx.result(synth(b, TEXT.incomplete)),
      fx.done(
        outcome.failed('incomplete_batch', 'The tool batch did not match the calls that were sent: missing results for a.', {
          missing: ['a'],
          unexpected: [],
          duplicated: [],
        }),
      ),
    ]);
  });
});

describe('dispatching: tools_parked -> awaiting_approval', () => {
  it('persists before announcing, and parks the calls as they were sent', () => {
    const h = call('h');
    const a = call('a', 'delete', { path: '/tmp/x' });
    // The dispatcher echoes a different input: the parked call keeps the pending identity.
    const [next, effects] = step(
      dispatching([h, a]),
      ev.parked([ok(h)], [{ call: { ...a, input: { path: '/' } }, reason: 'deletes files' }]),
    );
    expect(effects).toEqual([
      fx.persist('parked'),
      fx.emit('awaiting_approval', { pending: [{ call: a, input: a.input, reason: 'deletes files' }] }),
    ]);
    expect(next.status).toBe('awaiting_approval');
    expect(next.batch).toEqual({
      calls: [h, a],
      notExecuted: [],
      held: [ok(h)],
      parked: [{ call: a, input: a.input, reason: 'deletes files' }],
      decisions: {},
    });
  });

  it('parks the input the dispatcher classified (a hook rewrite) next to the sent call, and executes exactly that input', () => {
    const a = call('a', 'delete', { path: '/tmp/x' });
    const classified = { path: '/tmp/x', dryRun: true };
    const [parked, effects] = step(dispatching([a]), ev.parked([], [{ call: a, input: classified, reason: 'deletes files' }]));
    expect(parked.batch?.parked).toEqual([{ call: a, input: classified, reason: 'deletes files' }]);
    expect(effects[1]).toEqual(
      fx.emit('awaiting_approval', { pending: [{ call: a, input: classified, reason: 'deletes files' }] }),
    );
    const [, run] = step(parked, ev.decided({ a: { type: 'approve' } }));
    expect(run.at(-1)).toEqual({ type: 'execute_approved', calls: [{ id: 'a', name: 'delete', input: classified }] });
  });

  it('with no parked call it is applied like tools_completed', () => {
    const a = call('a');
    const b = call('b');
    const [next, effects] = step(dispatching([a, b]), ev.parked([ok(b), ok(a)], []));
    expect(effects).toEqual([
      fx.result(ok(a)),
      fx.result(ok(b)),
      fx.emit('steering', { round: 1 }),
      fx.persist('boundary'),
      fx.compact(1, usage({ modelCalls: 1, toolCalls: 2 })),
    ]);
    expect(next.status).toBe('steering');
  });
});

describe('awaiting_approval', () => {
  const h = call('h');
  const a = call('a', 'delete', { path: 'x' });
  const b = call('b', 'pay', { amount: 5 });
  const parked = () => drive(dispatching([h, a, b]), ev.parked([ok(h)], [{ call: a }, { call: b }]))[0];

  it('decisions accumulate until every parked call has one; then the approved calls execute', () => {
    const [partial, partialEffects] = step(parked(), ev.decided({ a: { type: 'approve' } }));
    expect(partialEffects).toEqual([]);
    expect(partial.status).toBe('awaiting_approval');
    expect(partial.batch?.decisions).toEqual({ a: { type: 'approve' } });

    // 'a' again (the first decision wins), an id not parked and a call that was not parked are ignored.
    const [next, effects] = step(
      partial,
      ev.decided({
        a: { type: 'reject' },
        zz: { type: 'approve' },
        h: { type: 'approve' },
        b: { type: 'reject', reason: 'too pricey' },
      }),
    );
    expect(effects).toEqual([
      fx.emit('ignored_event', { reason: 'not a valid decision for a parked call still undecided', callIds: ['a', 'zz', 'h'] }),
      fx.persist('dispatching'),
      fx.execute([a]),
    ]);
    expect(next.status).toBe('executing_approved');
    expect(next.batch?.decisions).toEqual({ a: { type: 'approve' }, b: { type: 'reject', reason: 'too pricey' } });

    // Held result, the approved call's result and the denial, merged in the original call order.
    const ra = ok(a, 'deleted');
    const [done, doneEffects] = step(next, ev.approvedCompleted([ra]));
    expect(doneEffects).toEqual([
      fx.result(ok(h)),
      fx.result(ra),
      fx.result(synth(b, TEXT.rejected('too pricey'))),
      fx.emit('steering', { round: 1 }),
      fx.persist('boundary'),
      fx.compact(1, usage({ modelCalls: 1, toolCalls: 3 })),
    ]);
    expect(done.status).toBe('steering');
    expect(done.batch).toBeNull();
  });

  it('an invalid decision value is ignored, not fatal', () => {
    const [next, effects] = step(
      parked(),
      ev.decided({ a: { type: 'maybe' }, b: { type: 'approve', remember: 'forever' }, h: 'yes' }),
    );
    expect(effects).toEqual([
      fx.emit('ignored_event', { reason: 'not a valid decision for a parked call still undecided', callIds: ['a', 'b', 'h'] }),
    ]);
    expect(next.batch?.decisions).toEqual({});
    expect(next.status).toBe('awaiting_approval');
  });

  it('everything sent while approved calls execute is ignored (same state)', () => {
    const executing = drive(parked(), ev.decided({ a: { type: 'approve' }, b: { type: 'approve', remember: 'tool' } }))[0];
    expect(executing.status).toBe('executing_approved');
    const [afterDecision, decisionEffects] = step(executing, ev.decided({ a: { type: 'reject' } }));
    expect(decisionEffects).toEqual([
      fx.emit('ignored_event', { reason: 'approved calls are already executing', callIds: ['a'] }),
    ]);
    expect(afterDecision).toBe(executing);
    const [afterExpiry, expiryEffects] = step(executing, ev.expired());
    expect(expiryEffects).toEqual([fx.emit('ignored_event', { reason: 'approved calls are already executing', callIds: [] })]);
    expect(afterExpiry).toBe(executing);
  });

  it('approval_expired rejects every undecided call with reason "approval expired"', () => {
    const decided = drive(parked(), ev.decided({ a: { type: 'approve' } }))[0];
    const [next, effects] = step(decided, ev.expired());
    expect(effects).toEqual([fx.persist('dispatching'), fx.execute([a])]);
    expect(next.batch?.decisions).toEqual({ a: { type: 'approve' }, b: { type: 'reject', reason: 'approval expired' } });
    const [, doneEffects] = step(next, ev.approvedCompleted([ok(a)]));
    expect(doneEffects.slice(0, 3)).toEqual([
      fx.result(ok(h)),
      fx.result(ok(a)),
      fx.result(synth(b, TEXT.rejected('approval expired'))),
    ]);
  });

  it('approval_expired with nothing decided applies the batch with every parked call denied', () => {
    const [next, effects] = step(parked(), ev.expired());
    expect(effects).toEqual([
      fx.result(ok(h)),
      fx.result(synth(a, TEXT.rejected('approval expired'))),
      fx.result(synth(b, TEXT.rejected('approval expired'))),
      fx.emit('steering', { round: 1 }),
      fx.persist('boundary'),
      fx.compact(1, usage({ modelCalls: 1, toolCalls: 3 })),
    ]);
    expect(next.status).toBe('steering');
  });

  it('none approved: the batch is applied at once (held results and denials in call order)', () => {
    const [next, effects] = step(parked(), ev.decided({ b: { type: 'reject' }, a: { type: 'reject', reason: 'not today' } }));
    expect(effects).toEqual([
      fx.result(ok(h)),
      fx.result(synth(a, TEXT.rejected('not today'))),
      fx.result(synth(b, TEXT.rejected())),
      fx.emit('steering', { round: 1 }),
      fx.persist('boundary'),
      fx.compact(1, usage({ modelCalls: 1, toolCalls: 3 })),
    ]);
    expect(next.status).toBe('steering');
    expect(next.round).toBe(1);
  });

  it('none approved, the ignored_event notice of the same event is still emitted', () => {
    const [, effects] = step(parked(), ev.decided({ a: { type: 'reject' }, b: { type: 'reject' }, zz: { type: 'approve' } }));
    expect(effects).toEqual([
      fx.emit('ignored_event', { reason: 'not a valid decision for a parked call still undecided', callIds: ['zz'] }),
      fx.result(ok(h)),
      fx.result(synth(a, TEXT.rejected())),
      fx.result(synth(b, TEXT.rejected())),
      fx.emit('steering', { round: 1 }),
      fx.persist('boundary'),
      fx.compact(1, usage({ modelCalls: 1, toolCalls: 3 })),
    ]);
  });

  it('a hook stop in a held result ends the turn once the approvals are settled', () => {
    const held = { ...ok(h), stop: { reason: 'enough' } };
    const state = drive(dispatching([h, a]), ev.parked([held], [{ call: a }]))[0];
    const [next, effects] = step(state, ev.decided({ a: { type: 'reject' } }));
    expect(effects).toEqual([
      fx.result(held),
      fx.result(synth(a, TEXT.rejected())),
      fx.done(outcome.stopped('hook_stopped', 'enough')),
    ]);
    expect(next.status).toBe('stopped');
  });

  it('approved_tools_completed while nothing executes is an unexpected event (held results and denials kept)', () => {
    const state = drive(parked(), ev.decided({ a: { type: 'reject' } }))[0];
    const [next, effects] = step(state, ev.approvedCompleted([ok(b)]));
    expect(effects).toEqual([
      fx.result(ok(h)),
      fx.result(synth(a, TEXT.rejected())),
      fx.result(synth(b, TEXT.unexpected)),
      fx.done(
        unexpectedEvent(
          'awaiting_approval',
          'approved_tools_completed',
          "'approved_tools_completed' is not expected while the turn is awaiting_approval",
        ),
      ),
    ]);
    expect(next.status).toBe('failed');
  });

  // Pins the code as it is: the approved batch not matching fails like an incomplete batch and, as in
  // dispatching, synthesises a result for EVERY pending call (held results and denials are replaced).
  it('approved_tools_completed with ids not matching the approved ones -> failed (incomplete_batch), held results and denials kept', () => {
    const state = drive(parked(), ev.decided({ a: { type: 'approve' }, b: { type: 'reject' } }))[0];
    const [next, effects] = step(state, ev.approvedCompleted([ok(b)]));
    expect(effects).toEqual([
      fx.result(ok(h)),
      fx.result(synth(a, TEXT.incomplete)),
      fx.result(synth(b, TEXT.rejected())),
      fx.done(
        outcome.failed(
          'incomplete_batch',
          'The tool batch did not match the calls that were sent: missing results for a; results for unknown calls b.',
          { missing: ['a'], unexpected: ['b'], duplicated: [] },
        ),
      ),
    ]);
    expect(next.status).toBe('failed');
  });

  it('call ids such as __proto__ are stored as own properties', () => {
    const p = call('__proto__', 'delete', {});
    const state = drive(dispatching([p, a]), ev.parked([], [{ call: p }, { call: a }]))[0];
    const [next, effects] = step(state, JSON.parse('{"type":"approvals_decided","decisions":{"__proto__":{"type":"approve"}}}'));
    expect(effects).toEqual([]);
    expect(Object.hasOwn(next.batch?.decisions ?? {}, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(next.batch?.decisions)).toBe(Object.prototype);
    const [, after] = step(next, ev.decided({ a: { type: 'reject' } }));
    expect(after).toEqual([fx.persist('dispatching'), fx.execute([p])]);
  });
});

describe('steering: compacted', () => {
  const a = call('a');

  it('-> calling_model: announces the iteration and calls the model (not final)', () => {
    const [next, effects] = step(steering([a]), ev.compacted());
    expect(effects).toEqual([fx.emit('iteration', { iteration: 2 }), fx.callModel(2, false)]);
    expect(next.status).toBe('calling_model');
    expect(next.usage.modelCalls).toBe(2);
  });

  it('round >= maxIterations -> a forced final call (tools disabled)', () => {
    const [next, effects] = step(steering([a], { maxIterations: 1 }), ev.compacted());
    expect(effects).toEqual([fx.emit('limit_reached', { limit: 'max_iterations', round: 1 }), fx.callModel(2, true)]);
    expect(next.forced).toBe('max_iterations');
    expect(next.lastRequest).toEqual({ iteration: 2, final: true });
  });

  it('maxModelCalls used up -> stopped (budget_exhausted)', () => {
    const [next, effects] = step(steering([a], { budget: { maxModelCalls: 1 } }), ev.compacted());
    expect(effects).toEqual([fx.done(outcome.stopped('budget_exhausted', null))]);
    expect(next.status).toBe('stopped');
  });

  it('maxToolCalls used up -> stopped (budget_exhausted)', () => {
    const [next, effects] = step(steering([a, call('b')], { budget: { maxToolCalls: 2 } }), ev.compacted());
    expect(effects).toEqual([fx.done(outcome.stopped('budget_exhausted', null))]);
    expect(next.status).toBe('stopped');
  });

  it('tool calls below maxToolCalls go on', () => {
    const [next] = step(steering([a], { budget: { maxToolCalls: 2 } }), ev.compacted());
    expect(next.status).toBe('calling_model');
  });
});

describe('the one-shot model override', () => {
  const a = call('a');
  const b = call('b');

  it('the first result in call order carrying modelOverride sets it for the next call only', () => {
    const state = drive(
      dispatching([a, b]),
      ev.completed([
        { ...ok(b), modelOverride: 'second' },
        { ...ok(a), modelOverride: 'big-model' },
      ]),
    )[0];
    expect(state.nextModel).toBe('big-model');
    const [calling, effects] = step(state, ev.compacted());
    expect(effects).toEqual([fx.emit('iteration', { iteration: 2 }), fx.callModel(2, false, 'big-model')]);
    expect(calling.nextModel).toBeNull();
    const [, later] = drive(calling, ev.responded([call('c')]), ev.completed([ok(call('c'))]), ev.compacted());
    expect(later).toEqual([fx.emit('iteration', { iteration: 3 }), fx.callModel(3, false)]);
  });

  it('a forced final call does not use it and clears it', () => {
    const state = drive(dispatching([a], { maxIterations: 1 }), ev.completed([{ ...ok(a), modelOverride: 'big-model' }]))[0];
    const [next, effects] = step(state, ev.compacted());
    expect(effects).toEqual([fx.emit('limit_reached', { limit: 'max_iterations', round: 1 }), fx.callModel(2, true)]);
    expect(next.nextModel).toBeNull();
  });
});

describe('finalizing', () => {
  it('output_accepted -> stopped (completed) with the output', () => {
    const [next, effects] = step(finalizing('Paris.'), ev.accepted({ city: 'Paris' }));
    expect(effects).toEqual([fx.done(outcome.stopped('completed', { city: 'Paris' }))]);
    expect(next.status).toBe('stopped');
    expect(next.candidate).toBeNull();
  });

  it('output_rejected with repairs left -> the reason goes back to the model (same `final`)', () => {
    const [next, effects] = step(finalizing('Paris'), ev.rejected('Answer in JSON.'));
    expect(effects).toEqual([fx.user('Answer in JSON.'), fx.callModel(1, false)]);
    expect(next.status).toBe('calling_model');
    expect(next.repairs).toBe(1);
    expect(next.candidate).toBeNull();
  });

  it('a repair of a forced final reply is final too', () => {
    const forced = drive(steering([call('a')], { maxIterations: 1 }), ev.compacted(), ev.responded([], 'x'))[0];
    const [next, effects] = step(forced, ev.rejected('Too short.'));
    expect(effects).toEqual([fx.user('Too short.'), fx.callModel(2, true)]);
    expect(next.forced).toBe('max_iterations');
    const [, end] = drive(next, ev.responded([], 'longer'), ev.accepted('longer'));
    expect(end).toEqual([fx.done(outcome.stopped('max_iterations', 'longer'))]);
  });

  it('output_rejected with no repairs left -> failed (output_invalid)', () => {
    const state = drive(finalizing('a', { maxOutputRepairs: 1 }), ev.rejected('no'), ev.responded([], 'b'))[0];
    const [next, effects] = step(state, ev.rejected('still no'));
    expect(effects).toEqual([
      fx.done(
        outcome.failed('output_invalid', 'The final output was rejected and no repairs are left: still no', {
          reason: 'still no',
        }),
      ),
    ]);
    expect(next.status).toBe('failed');
    expect(next.repairs).toBe(1);
  });
});

describe('about to issue call_llm beyond maxModelCalls -> stopped (budget_exhausted) instead of the call', () => {
  it('at start', () => {
    const [next, effects] = step(newTurn({ budget: { maxModelCalls: 0 } }), ev.start('hi'));
    expect(effects).toEqual([
      fx.user('hi'),
      fx.emit('turn_started', { id: 't1' }),
      fx.emit('iteration', { iteration: 1 }),
      fx.done(outcome.stopped('budget_exhausted', null)),
    ]);
    expect(next.status).toBe('stopped');
    expect(next.usage.modelCalls).toBe(0);
  });

  it('at steering', () => {
    const [, effects] = step(steering([call('a')], { budget: { maxModelCalls: 1 } }), ev.compacted());
    expect(effects).toEqual([fx.done(outcome.stopped('budget_exhausted', null))]);
  });

  it('at a loop', () => {
    const a = call('a', 'search', { q: 1 });
    const b = call('b', 'search', { q: 1 });
    const state = drive(steering([a], { loopThreshold: 2, budget: { maxModelCalls: 2 } }), ev.compacted())[0];
    const [next, effects] = step(state, ev.responded([b]));
    expect(effects).toEqual([
      fx.assistant('', [b]),
      fx.result(synth(b, TEXT.skipped)),
      fx.emit('limit_reached', { limit: 'loop_detected', repeats: 2 }),
      fx.done(outcome.stopped('budget_exhausted', null)),
    ]);
    expect(next.status).toBe('stopped');
    expect(next.usage.modelCalls).toBe(2);
  });

  it('at a repair', () => {
    const [next, effects] = step(finalizing('x', { budget: { maxModelCalls: 1 } }), ev.rejected('Try again.'));
    expect(effects).toEqual([fx.user('Try again.'), fx.done(outcome.stopped('budget_exhausted', null))]);
    expect(next.usage.modelCalls).toBe(1);
  });
});

describe('cancel from every non-terminal status', () => {
  const h = call('h');
  const a = call('a');
  const b = call('b');
  const cancelled = outcome.cancelled('user pressed stop');

  it.each<[string, () => TurnState]>([
    ['ready', () => newTurn()],
    ['calling_model', () => callingModel()],
    ['steering', () => steering([a])],
    ['finalizing', () => finalizing()],
  ])('%s: nothing pending, just done', (status, make) => {
    const state = make();
    expect(state.status).toBe(status);
    const [next, effects] = step(state, ev.cancel('user pressed stop'));
    expect(effects).toEqual([fx.done(cancelled)]);
    expect(next.status).toBe('cancelled');
    expect(next.outcome).toEqual(cancelled);
  });

  it('without a reason', () => {
    const [, effects] = step(newTurn(), ev.cancel());
    expect(effects).toEqual([fx.done(outcome.cancelled('cancelled by the caller'))]);
  });

  it('dispatching: a cancelled result for every pending call', () => {
    const [next, effects] = step(dispatching([a, b]), ev.cancel('user pressed stop'));
    expect(effects).toEqual([fx.result(synth(a, TEXT.cancelled)), fx.result(synth(b, TEXT.cancelled)), fx.done(cancelled)]);
    expect(next.batch).toBeNull();
  });

  it('awaiting_approval: held results and denials are kept, the rest are cancelled', () => {
    const state = drive(
      dispatching([h, a, b]),
      ev.parked([ok(h)], [{ call: a }, { call: b }]),
      ev.decided({ a: { type: 'reject', reason: 'no' } }),
    )[0];
    const [next, effects] = step(state, ev.cancel('user pressed stop'));
    expect(effects).toEqual([
      fx.result(ok(h)),
      fx.result(synth(a, TEXT.rejected('no'))),
      fx.result(synth(b, TEXT.cancelled)),
      fx.done(cancelled),
    ]);
    expect(next.status).toBe('cancelled');
    expect(next.batch).toBeNull();
  });

  it('executing_approved: the executing calls are cancelled', () => {
    const state = drive(
      dispatching([h, a, b]),
      ev.parked([ok(h)], [{ call: a }, { call: b }]),
      ev.decided({ a: { type: 'reject' }, b: { type: 'approve' } }),
    )[0];
    expect(state.status).toBe('executing_approved');
    const [next, effects] = step(state, ev.cancel('user pressed stop'));
    expect(effects).toEqual([
      fx.result(ok(h)),
      fx.result(synth(a, TEXT.rejected())),
      fx.result(synth(b, TEXT.cancelled)),
      fx.done(cancelled),
    ]);
    expect(next.batch).toBeNull();
  });
});

describe('cancel_batch: the batch in flight ends, the turn goes on', () => {
  const h = call('h');
  const a = call('a');
  const b = call('b');

  it('dispatching: a cancelled result for every call, then steering as after a round', () => {
    const [next, effects] = step(dispatching([a, b]), ev.cancelBatch('user skipped the search'));
    const u = usage({ modelCalls: 1, toolCalls: 2 });
    expect(effects).toEqual([
      fx.result(synth(a, TEXT.batchCancelled('user skipped the search'))),
      fx.result(synth(b, TEXT.batchCancelled('user skipped the search'))),
      fx.emit('steering', { round: 1 }),
      fx.persist('boundary'),
      fx.compact(1, u),
    ]);
    expect(next).toMatchObject({ status: 'steering', batch: null, round: 1 });
    // The next model call sees the cancelled results (they are in the transcript) and keeps its tools.
    expect(step(next, ev.compacted())[1].at(-1)).toEqual(fx.callModel(2, false));
  });

  it('awaiting_approval and executing_approved: held results and denials are kept, the rest are cancelled', () => {
    const parked = drive(
      dispatching([h, a, b]),
      ev.parked([ok(h)], [{ call: a }, { call: b }]),
      ev.decided({ a: { type: 'reject', reason: 'no' } }),
    )[0];
    const [afterParked, parkedEffects] = step(parked, ev.cancelBatch());
    expect(parkedEffects.slice(0, 3)).toEqual([
      fx.result(ok(h)),
      fx.result(synth(a, TEXT.rejected('no'))),
      fx.result(synth(b, TEXT.batchCancelled())),
    ]);
    expect(afterParked.status).toBe('steering');

    const executing = drive(parked, ev.decided({ b: { type: 'approve' } }))[0];
    expect(executing.status).toBe('executing_approved');
    const [afterExecuting, executingEffects] = step(executing, ev.cancelBatch());
    expect(executingEffects.slice(0, 3)).toEqual([
      fx.result(ok(h)),
      fx.result(synth(a, TEXT.rejected('no'))),
      fx.result(synth(b, TEXT.batchCancelled())),
    ]);
    expect(afterExecuting).toMatchObject({ status: 'steering', batch: null });
  });

  it('a held result asking to stop still stops the turn', () => {
    const stop = { ...ok(h), stop: { reason: 'enough' } };
    const parked = drive(dispatching([h, a]), ev.parked([stop], [{ call: a }]))[0];
    const [next, effects] = step(parked, ev.cancelBatch());
    expect(next.status).toBe('stopped');
    expect(effects.at(-1)).toEqual(fx.done(outcome.stopped('hook_stopped', 'enough')));
  });

  it.each<[string, () => TurnState]>([
    ['ready', () => newTurn()],
    ['calling_model', () => callingModel()],
    ['steering', () => steering([a])],
    ['finalizing', () => finalizing()],
  ])('%s: no batch in flight, so it is ignored with a notice', (status, make) => {
    const state = make();
    const [next, effects] = step(state, ev.cancelBatch());
    expect(next).toBe(state);
    expect(effects).toEqual([
      fx.emit('ignored_event', { reason: `there is no tool batch in flight to cancel while the turn is ${status}`, callIds: [] }),
    ]);
  });

  it('a malformed reason fails the turn like any malformed event', () => {
    const [next] = step(dispatching([a]), { type: 'cancel_batch', reason: 7 });
    expect(next.outcome).toMatchObject({ status: 'failed', error: { kind: 'unexpected_event' } });
  });
});

describe('terminal statuses absorb every event', () => {
  const terminals: Array<[string, () => TurnState]> = [
    ['stopped', () => drive(finalizing(), ev.accepted('x'))[0]],
    ['failed', () => drive(callingModel(), { type: 'model_failed', error: { kind: 'x', message: 'y' } })[0]],
    ['cancelled', () => drive(newTurn(), ev.cancel())[0]],
  ];
  const events: unknown[] = [
    ev.start('again'),
    ev.cancel(),
    ev.compacted(),
    null,
    42,
    { type: 'bogus' },
    ev.responded([call('z')]),
  ];

  it.each(terminals)('%s: the same state object, no effects', (status, make) => {
    const state = make();
    expect(state.status).toBe(status);
    expect(isTerminal(state)).toBe(true);
    for (const event of events) {
      const [next, effects] = step(state, event);
      expect(next).toBe(state);
      expect(effects).toEqual([]);
    }
  });
});

describe('anything else (incl. malformed events) -> failed (unexpected_event)', () => {
  it('an unknown event type', () => {
    const [next, effects] = step(newTurn(), { type: 'bogus' });
    expect(effects).toEqual([fx.done(unexpectedEvent('ready', 'bogus', "'bogus' is not a turn event type"))]);
    expect(next.status).toBe('failed');
  });

  it.each([
    ['null', null, 'object'],
    ['a number', 7, 'number'],
    ['an array', [{ type: 'start' }], 'object'],
  ])('not an object: %s', (_name, event, eventType) => {
    const [, effects] = step(callingModel(), event);
    expect(effects).toEqual([
      fx.done(unexpectedEvent('calling_model', eventType, 'an event must be an object with a string `type`')),
    ]);
  });

  it('a type that is not a string', () => {
    const [, effects] = step(newTurn(), { type: 3 });
    expect(effects).toEqual([fx.done(unexpectedEvent('ready', 'number', 'an event must have a string `type`'))]);
  });

  it('missing fields: synthesised results for the pending calls', () => {
    const a = call('a');
    const [next, effects] = step(dispatching([a]), { type: 'tools_completed' });
    expect(effects).toEqual([
      fx.result(synth(a, TEXT.unexpected)),
      fx.done(unexpectedEvent('dispatching', 'tools_completed', 'results must be an array')),
    ]);
    expect(next.batch).toBeNull();
  });

  it.each([
    ['output_accepted without output', finalizing, { type: 'output_accepted' }, 'output_accepted.output is missing'],
    ['output_rejected without reason', finalizing, { type: 'output_rejected' }, 'output_rejected.reason must be a string'],
    ['model_failed without error', callingModel, { type: 'model_failed' }, 'error must be an object with kind and message'],
    [
      'a result without isError',
      () => dispatching([call('a')]),
      { type: 'tools_completed', results: [{ callId: 'a', name: 'search', output: 1 }] },
      'results[0].isError must be a boolean',
    ],
    [
      'a result whose errorKind is not a short snake_case word',
      () => dispatching([call('a')]),
      { type: 'tools_completed', results: [{ callId: 'a', name: 'search', output: 'x', isError: true, errorKind: 'Time Out!' }] },
      `results[0].errorKind must be a short snake_case word like 'timeout' (lowercase letters, digits, '_'; at most 64 characters), got "Time Out!"`,
    ],
  ])('%s', (_name, make, event, problem) => {
    const state = make();
    const [, effects] = step(state, event);
    expect(effects.at(-1)).toEqual(fx.done(unexpectedEvent(state.status, (event as { type: string }).type, problem)));
  });

  it("a result's errorKind is kept as it came", () => {
    const a = call('a');
    const failed = { callId: a.id, name: a.name, output: 'slow down', isError: true, errorKind: 'rate_limited' };
    const [, effects] = step(dispatching([a]), { type: 'tools_completed', results: [failed] });
    expect(effects[0]).toEqual(fx.result(failed));
  });

  it('an event in the wrong status', () => {
    const [next, effects] = step(newTurn(), ev.compacted());
    expect(effects).toEqual([
      fx.done(unexpectedEvent('ready', 'compacted', "'compacted' is not expected while the turn is ready")),
    ]);
    expect(next.outcome).toEqual(unexpectedEvent('ready', 'compacted', "'compacted' is not expected while the turn is ready"));
  });

  it('start twice', () => {
    const [, effects] = step(callingModel(), ev.start('again'));
    expect(effects).toEqual([
      fx.done(unexpectedEvent('calling_model', 'start', "'start' is not expected while the turn is calling_model")),
    ]);
  });
});

describe('step never throws: an internal error -> failed (internal_error)', () => {
  const internal = outcome.failed(
    'internal_error',
    'turnkit hit an internal error: boom. Please report it with the event that caused it.',
  );

  it('an event whose `type` getter throws; pending calls get results', () => {
    const a = call('a');
    const event = Object.defineProperty({}, 'type', {
      enumerable: true,
      get: () => {
        throw new Error('boom');
      },
    });
    const [next, effects] = step(dispatching([a]), event);
    expect(effects).toEqual([fx.result(synth(a, TEXT.internal)), fx.done(internal)]);
    expect(next.status).toBe('failed');
    expect(next.batch).toBeNull();
  });

  it('a response whose getter throws', () => {
    const event = {
      type: 'model_responded',
      get response(): unknown {
        throw new Error('boom');
      },
    };
    const [next, effects] = step(callingModel(), event);
    expect(effects).toEqual([fx.done(internal)]);
    expect(next.status).toBe('failed');
  });

  it('a state that is not a state still gives a failed turn', () => {
    const [next, effects] = step(null as unknown as TurnState, ev.start());
    expect(next.status).toBe('failed');
    expect(effects).toHaveLength(1);
    expect(effects[0]?.type).toBe('done');
  });
});

describe('step does not mutate its inputs', () => {
  const deepFreeze = <T>(value: T): T => {
    if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
      Object.freeze(value);
      for (const child of Object.values(value)) deepFreeze(child);
    }
    return value;
  };

  it('a whole approval round on deep-frozen states and events leaves each as it was', () => {
    const h = call('h');
    const a = call('a');
    const events = [
      ev.start('hi'),
      ev.responded([h, a]),
      ev.parked([ok(h)], [{ call: a }]),
      ev.decided({ a: { type: 'approve' } }),
      ev.approvedCompleted([ok(a)]),
      ev.compacted(),
    ];
    let state = createTurn({ id: 't1' });
    for (const event of events) {
      const previous = deepFreeze(state);
      const before = JSON.stringify([previous, event]);
      state = step(previous, deepFreeze(event))[0];
      expect(JSON.stringify([previous, event])).toBe(before);
    }
    expect(state.status).toBe('calling_model');
    expect(state.round).toBe(1);
  });
});

describe('effect_failed: the compact or check_output function broke', () => {
  const error = { kind: 'compact_failed', message: 'The compact function threw: disk full.' };
  const s = call('s', 'search', { q: 'x' });

  it('steering + effect_failed(compact) -> failed with that error', () => {
    const [next, effects] = step(steering([s]), { type: 'effect_failed', effect: 'compact', error });
    expect(effects).toEqual([fx.done({ status: 'failed', error })]);
    expect(next.status).toBe('failed');
  });

  it('finalizing + effect_failed(check_output) -> failed with that error', () => {
    const checkError = { kind: 'check_failed', message: 'The output check function threw: bug.' };
    const [next, effects] = step(finalizing(), { type: 'effect_failed', effect: 'check_output', error: checkError });
    expect(effects).toEqual([fx.done({ status: 'failed', error: checkError })]);
    expect(next.status).toBe('failed');
  });

  it('the wrong effect for the status, or a bad effect name, is an unexpected event', () => {
    const [wrong] = step(steering([s]), { type: 'effect_failed', effect: 'check_output', error });
    expect(wrong.outcome).toMatchObject({ status: 'failed', error: { kind: 'unexpected_event' } });
    const [bad] = step(finalizing(), { type: 'effect_failed', effect: 'call_llm', error });
    expect(bad.outcome).toMatchObject({ status: 'failed', error: { kind: 'unexpected_event' } });
  });
});

describe('effect_failed: the tool dispatcher itself threw', () => {
  const error = { kind: 'dispatch_failed', message: 'The tool dispatcher failed: db down.' };
  const text = `not executed: the tool dispatcher failed before this call reported a result (${error.message}).`;
  const h = call('h');
  const a = call('a', 'delete', { path: 'x' });
  const b = call('b', 'pay', { amount: 5 });

  it('dispatching + effect_failed(dispatch_tools) -> a result for every call in flight, then failed with that error', () => {
    const [next, effects] = step(dispatching([h, a]), { type: 'effect_failed', effect: 'dispatch_tools', error });
    expect(effects).toEqual([fx.result(synth(h, text)), fx.result(synth(a, text)), fx.done({ status: 'failed', error })]);
    expect(next.status).toBe('failed');
    expect(next.batch).toBeNull();
  });

  it('keeps the not-executed results of calls past maxCallsPerReply', () => {
    const [next, effects] = step(dispatching([h, a], { maxCallsPerReply: 1 }), {
      type: 'effect_failed',
      effect: 'dispatch_tools',
      error,
    });
    expect(effects.slice(0, 2)).toEqual([
      fx.result(synth(h, text)),
      fx.result(synth(a, 'not executed: the reply asked for 2 tool calls; limits.maxCallsPerReply is 1.')),
    ]);
    expect(next.status).toBe('failed');
  });

  it('executing_approved + effect_failed(execute_approved) -> held results and denials kept, the approved calls get the error', () => {
    const state = drive(
      dispatching([h, a, b]),
      ev.parked([ok(h)], [{ call: a }, { call: b }]),
      ev.decided({ a: { type: 'reject' }, b: { type: 'approve' } }),
    )[0];
    const [next, effects] = step(state, { type: 'effect_failed', effect: 'execute_approved', error });
    expect(effects).toEqual([
      fx.result(ok(h)),
      fx.result(synth(a, TEXT.rejected())),
      fx.result(synth(b, text)),
      fx.done({ status: 'failed', error }),
    ]);
    expect(next.status).toBe('failed');
    expect(next.batch).toBeNull();
  });

  it('execute_approved failing while nothing executes, or dispatch_tools while parked, is an unexpected event', () => {
    const parked = drive(dispatching([h, a]), ev.parked([], [{ call: h }, { call: a }]))[0];
    const [early] = step(parked, { type: 'effect_failed', effect: 'execute_approved', error });
    expect(early.outcome).toMatchObject({ status: 'failed', error: { kind: 'unexpected_event' } });
    const [wrong] = step(parked, { type: 'effect_failed', effect: 'dispatch_tools', error });
    expect(wrong.outcome).toMatchObject({ status: 'failed', error: { kind: 'unexpected_event' } });
  });
});

describe('deeply nested model input', () => {
  const nest = (levels: number): unknown => {
    let value: unknown = 'leaf';
    for (let i = 0; i < levels; i++) value = { v: value };
    return value;
  };

  it('is refused as an invalid model response naming the field, not an internal error (100,000 levels)', () => {
    const [next] = step(callingModel(), {
      type: 'model_responded',
      response: { text: '', toolCalls: [{ id: 'a', name: 'read', input: nest(100_000) }] },
    });
    expect(next.outcome).toMatchObject({ status: 'failed', error: { kind: 'invalid_model_response' } });
    expect(next.outcome?.status === 'failed' && next.outcome.error.message).toMatch(
      /response\.toolCalls\[0\]\.input must be a JSON value .*at most 2000 levels deep/,
    );
  });

  it('is accepted up to the limit, and the batch signature copes with it', () => {
    const [next] = step(callingModel(), {
      type: 'model_responded',
      response: { text: '', toolCalls: [{ id: 'a', name: 'read', input: nest(1_999) }] },
    });
    expect(next.status).toBe('dispatching');
  });
});

describe('audit records on the events that report tool results', () => {
  const record = (c: ToolCall, extra: Partial<CallRecord> = {}): CallRecord => ({
    turnId: 't',
    callId: c.id,
    tool: c.name,
    input: c.input,
    decision: 'allow',
    source: 'default',
    outcome: 'ok',
    durationMs: 3,
    attempts: 1,
    ...extra,
  });

  it('emits hook_blocked first for each call a before-hook refused, and nothing for the others', () => {
    const [a, b, c] = [call('a'), call('b'), call('c')];
    const blocked = { decision: 'deny', source: 'hook:no-secrets', outcome: 'denied', attempts: 0, durationMs: 0 } as const;
    const records = [
      record(a),
      record(b, { ...blocked, reason: 'Blocked: secrets stay here.' }),
      // A hook that answered for the tool (halt with isError false) did not block it; nor did a rule.
      record(c, { decision: 'deny', source: 'hook:cache', outcome: 'ok', attempts: 0 }),
    ];
    const results = [ok(a), synth(b, 'Blocked: secrets stay here.'), ok(c)];
    const [, effects] = step(dispatching([a, b, c]), { type: 'tools_completed', results, records });
    const [, plain] = step(dispatching([a, b, c]), { type: 'tools_completed', results });
    expect(effects).toEqual([
      fx.emit('hook_blocked', { callId: b.id, tool: b.name, hook: 'no-secrets', reason: 'Blocked: secrets stay here.' }),
      ...plain,
    ]);
  });

  it('reads records leniently: a malformed one is dropped, never failing the turn', () => {
    const a = call('a');
    const bad = [null, 5, { ...record(a), attempts: -1 }, { ...record(a), input: undefined }, { ...record(a), context: [] }];
    const [next, effects] = step(dispatching([a]), {
      type: 'tools_completed',
      results: [synth(a, 'denied')],
      records: [...bad, { ...record(a), decision: 'deny', source: 'hook:h', outcome: 'denied', durationMs: Number.NaN }],
    });
    const [plainNext, plain] = step(dispatching([a]), { type: 'tools_completed', results: [synth(a, 'denied')] });
    expect(effects).toEqual(plain);
    expect(next).toEqual(plainNext);
    const [, notRecords] = step(dispatching([a]), { type: 'tools_completed', results: [ok(a)], records: 'none' });
    expect(notRecords).toEqual(step(dispatching([a]), { type: 'tools_completed', results: [ok(a)] })[1]);
  });
});

describe('awaiting_approval: approvals that expire by time (expiresAfterMs, tools_parked.at, approval_expired.now)', () => {
  const timed = () =>
    drive(dispatching([call('a', 'deploy'), call('b', 'deploy')]), {
      type: 'tools_parked',
      held: [],
      parked: [
        { call: call('a', 'deploy'), expiresAfterMs: 1_000 },
        { call: call('b', 'deploy'), expiresAfterMs: 5_000 },
      ],
      at: 10_000,
    })[0];

  it('a parked call gets expiresAt = at + expiresAfterMs; approvalDeadline is the earliest undecided one', () => {
    const state = timed();
    expect(state.batch?.parked.map((p) => p.expiresAt)).toEqual([11_000, 15_000]);
    expect(approvalDeadline(state)).toBe(11_000);
    expect(approvalDeadline(step(state, ev.decided({ a: { type: 'approve' } }))[0])).toBe(15_000);
  });

  it('approval_expired { now } before any deadline: ignored with a notice, nothing changes', () => {
    const state = timed();
    const [next, effects] = step(state, { type: 'approval_expired', now: 10_999 });
    expect(next).toBe(state);
    expect(effects).toEqual([fx.emit('ignored_event', { reason: "no parked call's approval is due at 10999", callIds: [] })]);
  });

  it('approval_expired { now } past one deadline: that call is rejected as expired, the other still waits', () => {
    const [next, effects] = step(timed(), { type: 'approval_expired', now: 11_000 });
    expect(next.status).toBe('awaiting_approval');
    expect(next.batch?.decisions).toEqual({ a: { type: 'reject', reason: 'approval expired' } });
    expect(effects).toEqual([]);
    expect(approvalDeadline(next)).toBe(15_000);
  });

  it('approval_expired { now } past every deadline: every undecided call expires and the batch is applied', () => {
    const [next] = step(timed(), { type: 'approval_expired', now: 20_000 });
    expect(next.status).toBe('steering');
  });

  it('a call without expiresAfterMs never expires by time; approval_expired without now still expires it', () => {
    const state = drive(dispatching([call('a', 'deploy')]), ev.parked([], [{ call: call('a', 'deploy') }]))[0];
    expect(approvalDeadline(state)).toBeNull();
    expect(step(state, { type: 'approval_expired', now: Number.MAX_SAFE_INTEGER })[0]).toBe(state);
    expect(step(state, { type: 'approval_expired' })[0].status).toBe('steering');
  });

  it('a time that is not a whole number of ms >= 0 is a malformed event', () => {
    const [next] = step(timed(), { type: 'approval_expired', now: -1 });
    expect(next.status).toBe('failed');
  });
});
