// What core does with data nobody vouches for: a saved state whose counters were edited, a reply
// with far more tool calls than anyone should run, and call ids or tool names that are not
// printable. Work is bounded by counting effects, never by timing.
import { describe, expect, it } from 'vitest';
import { parseTurnState, resume, step, TurnStateError } from '@turnkit/core';
import type { Effect, Outcome, ToolCall, TurnLimitsInput, TurnState } from '@turnkit/core';
import { call, callingModel, dispatching, drive, ev, fx, newTurn, ok, outcome, steering, synth, TEXT } from './helpers.js';

const json = (state: TurnState): Record<string, unknown> => JSON.parse(JSON.stringify(state)) as Record<string, unknown>;

function fieldOf(input: unknown): string | undefined {
  try {
    parseTurnState(input);
  } catch (error) {
    expect(error).toBeInstanceOf(TurnStateError);
    expect((error as TurnStateError).message).toContain((error as TurnStateError).field);
    return (error as TurnStateError).field;
  }
  return undefined;
}

/**
 * Plays every side of a turn: each model call is answered with one fresh tool call (a different
 * input every time, so loop detection never ends the turn), every batch completes, every output
 * is rejected. Stops at the first `done`, or after `cap` blocking effects.
 */
function playOut(
  state: TurnState,
  effects: readonly Effect[],
  cap = 2000,
): { outcome: Outcome | null; modelCalls: number; blocking: number } {
  let current = state;
  let pending = effects;
  let modelCalls = 0;
  for (let blocking = 0; blocking < cap; blocking++) {
    const last = pending.at(-1);
    if (last === undefined || last.type === 'append' || last.type === 'emit' || last.type === 'persist')
      return { outcome: null, modelCalls, blocking };
    let event: unknown;
    switch (last.type) {
      case 'done':
        return { outcome: last.outcome, modelCalls, blocking };
      case 'call_llm':
        modelCalls += 1;
        event = ev.responded([call(`m${modelCalls}`, 'search', { n: modelCalls })]);
        break;
      case 'dispatch_tools':
      case 'execute_approved':
        event = {
          type: last.type === 'dispatch_tools' ? 'tools_completed' : 'approved_tools_completed',
          results: last.calls.map((c) => ok(c)),
        };
        break;
      case 'compact':
        event = ev.compacted();
        break;
      case 'check_output':
        event = ev.rejected('try again');
        break;
    }
    [current, pending] = step(current, event);
  }
  return { outcome: null, modelCalls, blocking: cap };
}

describe('a saved state with tampered counters', () => {
  // Past 2^53 adding 1 to a number changes nothing: a counter there never reaches a limit above it.
  const saturated = (): Record<string, unknown> => {
    const state = json(steering([call('a')], { budget: { maxModelCalls: 5 } }));
    return {
      ...state,
      limits: { ...(state.limits as object), maxIterations: 2 ** 53 + 2, budget: { maxModelCalls: 2 ** 53 + 2 } },
      round: 2 ** 53,
      usage: { ...(state.usage as object), modelCalls: 2 ** 53, toolCalls: 2 ** 53 },
    };
  };

  it('the counters that could never reach their limits are refused by parseTurnState, naming the field', () => {
    expect(fieldOf(saturated())).toBe('limits.maxIterations');
    const safeLimits = saturated();
    safeLimits.limits = { ...(safeLimits.limits as object), maxIterations: 10, budget: {} };
    expect(fieldOf(safeLimits)).toBe('round');
  });

  it('fed to step directly (no parseTurnState), the same state ends the turn after a bounded number of model calls', () => {
    const state = saturated() as unknown as TurnState;
    const played = playOut(...step(state, ev.compacted()));
    expect(played.outcome).not.toBeNull();
    expect(played.modelCalls).toBeLessThanOrEqual(1);
  });

  it.each<[string, (s: Record<string, unknown>) => void]>([
    ['round NaN', (s) => (s.round = Number.NaN)],
    ['round Infinity', (s) => (s.round = Infinity)],
    ['maxIterations Infinity', (s) => (s.limits = { ...(s.limits as object), maxIterations: Infinity })],
    ['maxIterations NaN', (s) => (s.limits = { ...(s.limits as object), maxIterations: Number.NaN })],
    ['repairs NaN', (s) => (s.repairs = Number.NaN)],
    ['maxOutputRepairs Infinity', (s) => (s.limits = { ...(s.limits as object), maxOutputRepairs: Infinity })],
    ['modelCalls NaN under maxModelCalls', (s) => (s.usage = { ...(s.usage as object), modelCalls: Number.NaN })],
    ['maxCallsPerReply NaN', (s) => (s.limits = { ...(s.limits as object), maxCallsPerReply: Number.NaN })],
  ])('%s: step still ends the turn within a few model calls', (_name, tamper) => {
    const state = { ...json(steering([call('a')], { maxIterations: 3, budget: { maxModelCalls: 50 } })) };
    tamper(state);
    const played = playOut(...step(state as unknown as TurnState, ev.compacted()));
    expect(played.outcome).not.toBeNull();
    // maxIterations 3 and maxOutputRepairs 2 allow at most 3 + 1 + 2 model calls in a whole turn.
    expect(played.modelCalls).toBeLessThanOrEqual(6);
  });

  const live = (limits: TurnLimitsInput = {}) => json(dispatching([call('a'), call('b')], limits));
  const liveBatch = (changes: Record<string, unknown>) => ({ ...live(), batch: { ...(live().batch as object), ...changes } });
  const tampered: Array<[string, () => Record<string, unknown>, string]> = [
    ['a round past maxIterations', () => ({ ...json(steering([call('a')], { maxIterations: 2 })), round: 3 }), 'round'],
    ['a round past Number.MAX_SAFE_INTEGER', () => ({ ...live(), round: 2 ** 53 }), 'round'],
    [
      'modelCalls past maxModelCalls',
      () => ({ ...live({ budget: { maxModelCalls: 3 } }), usage: { ...(live().usage as object), modelCalls: 4 } }),
      'usage.modelCalls',
    ],
    ['modelCalls negative', () => ({ ...live(), usage: { ...(live().usage as object), modelCalls: -1 } }), 'usage.modelCalls'],
    ['modelCalls fractional', () => ({ ...live(), usage: { ...(live().usage as object), modelCalls: 1.5 } }), 'usage.modelCalls'],
    [
      'modelCalls fewer than the rounds played',
      () => ({ ...live(), round: 4, usage: { ...(live().usage as object), modelCalls: 2, toolCalls: 9 } }),
      'usage.modelCalls',
    ],
    [
      'modelCalls reset to 0 under a budget',
      () => ({ ...live({ budget: { maxModelCalls: 3 } }), usage: { ...(live().usage as object), modelCalls: 0 } }),
      'usage.modelCalls',
    ],
    [
      'toolCalls past maxToolCalls',
      () => ({ ...live({ budget: { maxToolCalls: 2 } }), usage: { ...(live().usage as object), toolCalls: 3 } }),
      'usage.toolCalls',
    ],
    [
      'toolCalls fewer than the batch in flight',
      () => ({ ...live(), usage: { ...(live().usage as object), toolCalls: 1 } }),
      'usage.toolCalls',
    ],
    [
      'repairs past maxOutputRepairs',
      () => ({
        ...json(callingModel({ maxOutputRepairs: 1 })),
        repairs: 2,
        usage: { ...(live().usage as object), modelCalls: 3 },
      }),
      'repairs',
    ],
    ['repeats past loopThreshold', () => ({ ...live({ loopThreshold: 3 }), repeats: 4 }), 'repeats'],
    ['repeats 0 with a last batch', () => ({ ...live(), repeats: 0 }), 'repeats'],
    [
      'a model call whose iteration is not round + 1',
      () => ({ ...json(callingModel()), lastRequest: { iteration: 7, final: false } }),
      'lastRequest.iteration',
    ],
    ['a model call in flight without its request', () => ({ ...json(callingModel()), lastRequest: null }), 'lastRequest'],
    [
      'a ready turn that spent model calls',
      () => ({ ...json(newTurn()), usage: { ...(live().usage as object), modelCalls: 5, toolCalls: 0 } }),
      'usage.modelCalls',
    ],
    [
      'a batch larger than maxCallsPerReply',
      () => ({ ...live(), limits: { ...(live().limits as object), maxCallsPerReply: 1 } }),
      'batch.calls',
    ],
    ['a batch with a repeated id', () => liveBatch({ calls: [call('a'), call('a')] }), 'batch.calls[1].id'],
    ['a sent call id with a control character', () => liveBatch({ calls: [call('a\u0000'), call('b')] }), 'batch.calls[0].id'],
    [
      'a parked call name of 257 characters',
      () => ({ ...liveBatch({ parked: [{ call: call('a', 'x'.repeat(257)) }] }), status: 'awaiting_approval' }),
      'batch.parked[0].call.name',
    ],
    ['a batch in flight while steering', () => ({ ...json(steering([call('a')])), batch: live().batch }), 'batch'],
    [
      'maxCallsPerReply 0',
      () => ({ ...live(), limits: { ...(live().limits as object), maxCallsPerReply: 0 } }),
      'limits.maxCallsPerReply',
    ],
  ];

  it.each(tampered)('%s -> TurnStateError naming the field', (_name, make, field) => {
    expect(fieldOf(make())).toBe(field);
  });

  it('every state a turn passes through is still accepted', () => {
    // (the model checker parses every state it explores; this is the short version)
    const [parked] = drive(
      dispatching([call('a'), call('b')], { maxCallsPerReply: 2 }),
      ev.parked([ok(call('a'))], [{ call: call('b') }]),
    );
    for (const state of [newTurn(), callingModel(), dispatching([call('a')]), parked, steering([call('a')])])
      expect(fieldOf(json(state))).toBeUndefined();
  });

  it('a version 1 state migrates: seenCallIds is dropped, nothing is withheld, and an uncut batch is still accepted', () => {
    const calls = Array.from({ length: 40 }, (_, i) => call(`c${i}`));
    const { batch: _b, recoveries: _r, ...v2 } = json(dispatching(calls.slice(0, 32)));
    const v1 = {
      ...v2,
      version: 1,
      seenCallIds: calls.map((c) => c.id),
      pending: calls,
      held: [],
      parked: [],
      decisions: {},
      executing: null,
      usage: { ...(v2.usage as object), toolCalls: 40 },
    };
    const state = parseTurnState(v1);
    expect(state.batch?.calls).toHaveLength(40);
    expect(state.batch?.notExecuted).toEqual([]);
    expect('seenCallIds' in state).toBe(false);
  });

  it('resume does not re-issue a model call past maxModelCalls', () => {
    const atLimit = callingModel({ budget: { maxModelCalls: 1 } });
    expect(resume(atLimit)).toEqual([
      { ...atLimit, status: 'stopped', outcome: outcome.stopped('budget_exhausted', null) },
      [fx.done(outcome.stopped('budget_exhausted', null))],
    ]);
    const [again, effects] = resume(callingModel({ budget: { maxModelCalls: 2 } }));
    expect(effects).toEqual([fx.callModel(1, false)]);
    expect(again.usage.modelCalls).toBe(2);
  });
});

describe('limits.maxCallsPerReply and the tool-call budget: core decides which calls of a reply run', () => {
  const calls = (n: number, from = 0): ToolCall[] =>
    Array.from({ length: n }, (_, i) => call(`c${from + i}`, 'search', { i: from + i }));
  const overReply = (n: number, max: number) =>
    `not executed: the reply asked for ${n} tool calls; limits.maxCallsPerReply is ${max}.`;
  const overBudget = (max: number) =>
    `not executed: the turn's tool call budget is used up (limits.budget.maxToolCalls is ${max}).`;

  it('calls past the limit are not sent; each gets one result saying why, after the batch results, in call order', () => {
    const [a, b, c] = calls(3) as [ToolCall, ToolCall, ToolCall];
    const [next, effects] = step(callingModel({ maxCallsPerReply: 2 }), ev.responded([a, b, c]));
    expect(effects).toEqual([fx.assistant('', [a, b, c]), fx.persist('dispatching'), fx.dispatch([a, b])]);
    expect(next.batch?.calls).toEqual([a, b]);
    expect(next.batch?.notExecuted).toEqual([synth(c, overReply(3, 2))]);
    expect(next.usage.toolCalls).toBe(2);
    const [after, done] = step(next, ev.completed([ok(b), ok(a)]));
    expect(done).toEqual([
      fx.result(ok(a)),
      fx.result(ok(b)),
      fx.result(synth(c, overReply(3, 2))),
      fx.emit('steering', { round: 1 }),
      fx.persist('boundary'),
      fx.compact(1, after.usage),
    ]);
    expect(after.batch).toBeNull();
  });

  it('the default is 32', () => {
    const [next, effects] = step(callingModel(), ev.responded(calls(33)));
    expect(effects.at(-1)).toEqual(fx.dispatch(calls(32)));
    expect(next.batch?.notExecuted).toEqual([synth(calls(1, 32)[0] as ToolCall, overReply(33, 32))]);
  });

  it('all 10,000 calls of a reply under maxToolCalls 5: five run, the rest say which limit stopped them', () => {
    const many = calls(10_000);
    const [next, effects] = step(callingModel({ budget: { maxToolCalls: 5 } }), ev.responded(many));
    expect(effects.at(-1)).toEqual(fx.dispatch(many.slice(0, 5)));
    expect(next.usage.toolCalls).toBe(5);
    expect(next.batch?.notExecuted.map((r) => r.output)).toEqual([
      ...Array(27).fill(overBudget(5)),
      ...Array(10_000 - 32).fill(overReply(10_000, 32)),
    ]);
    // The budget is spent: the turn stops at the boundary, every call with exactly one result.
    const [end, rest] = drive(next, ev.completed(many.slice(0, 5).map((c) => ok(c))), ev.compacted());
    expect(end.outcome).toEqual(outcome.stopped('budget_exhausted', null));
    expect(rest).toEqual([fx.done(outcome.stopped('budget_exhausted', null))]);
  });

  it('a reply when the tool-call budget is used up runs nothing and stops the turn', () => {
    const [a, b] = calls(2) as [ToolCall, ToolCall];
    const [next, effects] = step(callingModel({ budget: { maxToolCalls: 0 } }), ev.responded([a, b]));
    expect(effects).toEqual([
      fx.assistant('', [a, b]),
      fx.result(synth(a, overBudget(0))),
      fx.result(synth(b, overBudget(0))),
      fx.done(outcome.stopped('budget_exhausted', null)),
    ]);
    expect(next.usage.toolCalls).toBe(0);
  });

  it('a cut batch that repeats is a loop: the whole reply is compared and every call of it is skipped', () => {
    const [a, b] = calls(2) as [ToolCall, ToolCall];
    const limits = { loopThreshold: 2, maxCallsPerReply: 1 };
    const first = drive(dispatching([a, b], limits), ev.completed([ok(a)]), ev.compacted())[0];
    const [a2, b2] = [call('a2', 'search', a.input), call('b2', 'search', b.input)];
    const [next, effects] = step(first, ev.responded([a2, b2]));
    expect(effects).toEqual([
      fx.assistant('', [a2, b2]),
      fx.result(synth(a2, TEXT.skipped)),
      fx.result(synth(b2, TEXT.skipped)),
      fx.emit('limit_reached', { limit: 'loop_detected', repeats: 2 }),
      fx.callModel(2, true),
    ]);
    expect(next.batch).toBeNull();
    // Only the part that differs is the part that did not run: still a different reply.
    const [other] = step(first, ev.responded([a2, call('b3', 'search', { other: true })]));
    expect(other.status).toBe('dispatching');
  });

  describe('every way a batch ends still gives each withheld call its result', () => {
    const [a, b, c] = calls(3) as [ToolCall, ToolCall, ToolCall];
    const cut = () => dispatching([a, b, c], { maxCallsPerReply: 2 });
    const withheld = fx.result(synth(c, overReply(3, 2)));

    it('cancel', () => {
      const [, effects] = step(cut(), ev.cancel('stop'));
      expect(effects).toEqual([
        fx.result(synth(a, TEXT.cancelled)),
        fx.result(synth(b, TEXT.cancelled)),
        withheld,
        fx.done(outcome.cancelled('stop')),
      ]);
    });

    it('an incomplete batch', () => {
      const [, effects] = step(cut(), ev.completed([ok(a)]));
      expect(effects.slice(0, 3)).toEqual([fx.result(synth(a, TEXT.incomplete)), fx.result(synth(b, TEXT.incomplete)), withheld]);
      expect(effects).toHaveLength(4);
    });

    it('a hook stop', () => {
      const stop = { ...ok(a), stop: { reason: 'enough' } };
      const [, effects] = step(cut(), ev.completed([stop, ok(b)]));
      expect(effects).toEqual([fx.result(stop), fx.result(ok(b)), withheld, fx.done(outcome.stopped('hook_stopped', 'enough'))]);
    });

    it('resume', () => {
      const [, effects] = resume(cut(), [ok(b)]);
      expect(effects.slice(0, 3)).toEqual([fx.result(synth(a, TEXT.interrupted)), fx.result(ok(b)), withheld]);
    });

    it('an approval round', () => {
      const [, effects] = drive(
        cut(),
        ev.parked([ok(a)], [{ call: b }]),
        ev.decided({ [b.id]: { type: 'approve' } }),
        ev.approvedCompleted([ok(b)]),
      );
      expect(effects.slice(0, 3)).toEqual([fx.result(ok(a)), fx.result(ok(b)), withheld]);
    });

    it('an unexpected event', () => {
      const [, effects] = step(cut(), ev.compacted());
      expect(effects.slice(0, 3)).toEqual([fx.result(synth(a, TEXT.unexpected)), fx.result(synth(b, TEXT.unexpected)), withheld]);
    });
  });

  it('a reply of 60,000 calls: 32 are dispatched and all 60,000 get exactly one result, in call order', () => {
    const many = calls(60_000);
    const [next, effects] = step(callingModel(), ev.responded(many));
    expect(effects).toHaveLength(3);
    expect(effects.at(-1)).toEqual(fx.dispatch(many.slice(0, 32)));
    const [, done] = step(next, ev.completed(many.slice(0, 32).map((c) => ok(c))));
    const results = done.flatMap((e) => (e.type === 'append' && e.message.role === 'tool' ? [e.message.result] : []));
    expect(results.map((r) => r.callId)).toEqual(many.map((c) => c.id));
    expect(results.filter((r) => r.isError)).toHaveLength(60_000 - 32);
  });

  it('a reply of 60,000 calls whose last id repeats the first: the last gets a derived id', () => {
    const many = [...calls(59_999), call('c0', 'fetch')];
    const [next] = step(callingModel(), ev.responded(many));
    const last = next.batch?.notExecuted.at(-1);
    expect(last?.callId).toBe('c0~60000');
    expect(next.callIds.count).toBe(60_000);
  });

  it('the state carries nothing that grows with the turn: after 300 rounds it is as large as after 10', () => {
    let state = drive(newTurn({ maxIterations: 400 }), ev.start())[0];
    const sizes: number[] = [];
    for (let round = 1; round <= 300; round++) {
      const [dispatching, effects] = step(state, ev.responded(calls(3, round * 3)));
      // Core may give a call a derived id (its filter of earlier ids errs towards renaming): results answer the ids sent.
      const sent = effects.flatMap((e) => (e.type === 'dispatch_tools' ? e.calls : []));
      state = drive(dispatching, ev.completed(sent.map((c) => ok(c))), ev.compacted())[0];
      if (round === 10 || round === 300) sizes.push(JSON.stringify(state).length);
    }
    expect(state.status).toBe('calling_model');
    // Only the digits of the counters (round, modelCalls, toolCalls, iteration, callIds.count) and of the last batch's inputs differ.
    expect((sizes[1] as number) - (sizes[0] as number)).toBeLessThanOrEqual(12);
  });
});

describe('call ids and tool names core accepts', () => {
  const refused: Array<[string, ToolCall, string]> = [
    ['an empty name', call('x', ''), 'response.toolCalls[1].name is empty'],
    ['an id with NUL (C0)', call('a\u0000b'), 'response.toolCalls[1].id contains the control character U+0000 at index 1'],
    ['an id with a newline (C0)', call('a\nb'), 'U+000A'],
    ['an id with U+001F (C0)', call('\u001f'), 'U+001F'],
    ['an id with DEL', call('a\u007f'), 'U+007F'],
    ['an id with U+0080 (C1)', call('a\u0080'), 'U+0080'],
    ['an id with U+009F (C1)', call('a\u009f'), 'U+009F'],
    [
      'a name with an escape (C0)',
      call('x', 'search\u001b[2J'),
      'response.toolCalls[1].name contains the control character U+001B',
    ],
    [
      'an id of 257 characters',
      call('i'.repeat(257)),
      'response.toolCalls[1].id is 257 characters long; at most 256 are allowed',
    ],
    ['a name of 257 characters', call('x', 'n'.repeat(257)), 'response.toolCalls[1].name is 257 characters long'],
  ];

  it.each(refused)('%s: invalid_model_response naming the field', (_name, bad, message) => {
    const [next, effects] = step(callingModel(), ev.responded([call('ok'), bad]));
    expect(next.status).toBe('failed');
    expect(next.outcome?.status === 'failed' && next.outcome.error.kind).toBe('invalid_model_response');
    const error = next.outcome?.status === 'failed' ? next.outcome.error : null;
    expect(error?.message).toContain(message);
    expect(error?.data).toEqual({
      field: message.startsWith('response.')
        ? message.split(' ')[0]
        : expect.stringMatching(/^response\.toolCalls\[1\]\.(id|name)$/),
    });
    expect(effects).toEqual([fx.done(next.outcome as Outcome)]);
  });

  it('accepts 256 characters, U+00A0 and anything printable', () => {
    const fine = [call('i'.repeat(256)), call('a\u00a0b', 'n'.repeat(256)), call('📎 ünïcode', 'mcp.server/tool-name')];
    const [next] = step(callingModel(), ev.responded(fine));
    expect(next.status).toBe('dispatching');
  });

  it('a forced final reply is not checked: its calls are dropped unread', () => {
    const forced = drive(steering([call('a')], { maxIterations: 1 }), ev.compacted())[0];
    expect(step(forced, ev.responded([call('\u0000')], 'done'))[0].status).toBe('finalizing');
  });
});
