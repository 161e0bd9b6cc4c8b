// createTurn's option checks, parseTurnState's validation and versioning, batchSignature, isTerminal.
import { describe, expect, it } from 'vitest';
import { batchSignature } from '../src/signature.ts';
import { createTurn, isTerminal, parseTurnState, TURN_STATE_VERSION, TurnStateError } from '@turnkit/core';
import type { TurnState } from '@turnkit/core';
import { call, callingModel, dispatching, drive, ev, finalizing, newTurn, ok, steering } from './helpers.js';

describe('createTurn', () => {
  it('a new turn is ready, with the default limits and nothing spent', () => {
    expect(createTurn({ id: 'turn-1' })).toEqual({
      version: TURN_STATE_VERSION,
      id: 'turn-1',
      status: 'ready',
      limits: {
        maxIterations: 10,
        loopThreshold: 5,
        loopExemptTools: [],
        maxOutputRepairs: 2,
        maxCallsPerReply: 32,
        maxModelRetries: 2,
        modelRetryBackoffMs: 500,
        loopRecoveries: 0,
        budget: {},
      },
      round: 0,
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, cost: 0, modelCalls: 0, toolCalls: 0 },
      forced: null,
      batch: null,
      lastBatch: null,
      repeats: 0,
      repairs: 0,
      recoveries: 0,
      candidate: null,
      nextModel: null,
      lastRequest: null,
      outcome: null,
      callIds: { count: 0, filter: '' },
      agents: null,
    });
  });

  it('keeps valid limits', () => {
    const limits = {
      maxIterations: 1,
      loopThreshold: 0,
      loopExemptTools: ['status'],
      maxOutputRepairs: 0,
      budget: { maxModelCalls: 0, maxCost: 0.5 },
    };
    expect(createTurn({ id: 't', limits }).limits).toEqual({
      ...limits,
      maxCallsPerReply: 32,
      maxModelRetries: 2,
      modelRetryBackoffMs: 500,
      loopRecoveries: 0,
      budget: { maxModelCalls: 0, maxCost: 0.5 },
    });
    expect(createTurn({ id: 't', limits: { maxCallsPerReply: 1 } }).limits.maxCallsPerReply).toBe(1);
    expect(createTurn({ id: 't', limits: { loopThreshold: 2 } }).limits.loopThreshold).toBe(2);
  });

  it.each<[string, unknown, string]>([
    ['no options', undefined, 'options object'],
    ['an unknown option', { id: 't', maxIterations: 3 }, "unknown option 'maxIterations'"],
    ['an empty id', { id: '' }, "'id'"],
    ['a numeric id', { id: 7 }, "'id'"],
    ['limits not an object', { id: 't', limits: 5 }, 'limits must be an object'],
    ['an unknown limit', { id: 't', limits: { maxIteration: 3 } }, "limits has an unknown option 'maxIteration'"],
    ['maxIterations 0', { id: 't', limits: { maxIterations: 0 } }, 'limits.maxIterations'],
    ['maxIterations 2.5', { id: 't', limits: { maxIterations: 2.5 } }, 'limits.maxIterations'],
    ['maxIterations "3"', { id: 't', limits: { maxIterations: '3' } }, 'limits.maxIterations'],
    ['loopThreshold -1', { id: 't', limits: { loopThreshold: -1 } }, 'limits.loopThreshold'],
    ['loopThreshold 1', { id: 't', limits: { loopThreshold: 1 } }, 'limits.loopThreshold must be 0 (off) or at least 2'],
    ['loopExemptTools not an array', { id: 't', limits: { loopExemptTools: 'status' } }, 'limits.loopExemptTools'],
    ['loopExemptTools with a number', { id: 't', limits: { loopExemptTools: ['a', 1] } }, 'limits.loopExemptTools'],
    ['maxOutputRepairs -1', { id: 't', limits: { maxOutputRepairs: -1 } }, 'limits.maxOutputRepairs'],
    ['budget not an object', { id: 't', limits: { budget: 'lots' } }, 'limits.budget must be an object'],
    ['an unknown budget', { id: 't', limits: { budget: { maxTokens: 3 } } }, "limits.budget has an unknown option 'maxTokens'"],
    ['maxModelCalls -1', { id: 't', limits: { budget: { maxModelCalls: -1 } } }, 'limits.budget.maxModelCalls'],
    ['maxToolCalls 1.5', { id: 't', limits: { budget: { maxToolCalls: 1.5 } } }, 'limits.budget.maxToolCalls'],
    ['maxInputTokens NaN', { id: 't', limits: { budget: { maxInputTokens: Number.NaN } } }, 'limits.budget.maxInputTokens'],
    ['maxOutputTokens Infinity', { id: 't', limits: { budget: { maxOutputTokens: Infinity } } }, 'limits.budget.maxOutputTokens'],
    ['maxTotalTokens "10"', { id: 't', limits: { budget: { maxTotalTokens: '10' } } }, 'limits.budget.maxTotalTokens'],
    ['maxCost -0.1', { id: 't', limits: { budget: { maxCost: -0.1 } } }, 'limits.budget.maxCost'],
    ['maxCost Infinity', { id: 't', limits: { budget: { maxCost: Infinity } } }, 'limits.budget.maxCost'],
    ['maxCallsPerReply 0', { id: 't', limits: { maxCallsPerReply: 0 } }, 'limits.maxCallsPerReply must be an integer >= 1'],
    ['maxCallsPerReply 1.5', { id: 't', limits: { maxCallsPerReply: 1.5 } }, 'limits.maxCallsPerReply'],
    ['maxCallsPerReply "8"', { id: 't', limits: { maxCallsPerReply: '8' } }, 'limits.maxCallsPerReply'],
    ['maxModelRetries -1', { id: 't', limits: { maxModelRetries: -1 } }, 'limits.maxModelRetries must be an integer >= 0'],
    ['maxModelRetries 1.5', { id: 't', limits: { maxModelRetries: 1.5 } }, 'limits.maxModelRetries'],
    [
      'modelRetryBackoffMs -1',
      { id: 't', limits: { modelRetryBackoffMs: -1 } },
      'limits.modelRetryBackoffMs must be an integer >= 0',
    ],
    ['modelRetryBackoffMs NaN', { id: 't', limits: { modelRetryBackoffMs: Number.NaN } }, 'limits.modelRetryBackoffMs'],
    ['maxIterations past Number.MAX_SAFE_INTEGER', { id: 't', limits: { maxIterations: 2 ** 53 + 2 } }, 'limits.maxIterations'],
    [
      'maxModelCalls past Number.MAX_SAFE_INTEGER',
      { id: 't', limits: { budget: { maxModelCalls: 2 ** 53 } } },
      'limits.budget.maxModelCalls',
    ],
  ])('%s -> a RangeError naming the option', (_name, options, named) => {
    expect(() => createTurn(options as Parameters<typeof createTurn>[0])).toThrow(RangeError);
    expect(() => createTurn(options as Parameters<typeof createTurn>[0])).toThrow(named);
  });
});

describe('parseTurnState', () => {
  const samples: Array<[string, () => TurnState]> = [
    ['ready', () => newTurn({ maxIterations: 3, loopExemptTools: ['status'], budget: { maxCost: 1.5 } })],
    ['calling_model', () => callingModel()],
    ['dispatching', () => dispatching([call('a', 'search', { q: 'x', deep: [1, { y: null }] })])],
    [
      'awaiting_approval',
      () =>
        drive(
          dispatching([call('h'), call('a')]),
          ev.parked([ok(call('h'))], [{ call: call('a'), reason: 'why' }]),
          ev.decided({}),
        )[0],
    ],
    [
      'executing_approved',
      () =>
        drive(
          dispatching([call('h'), call('a'), call('b')]),
          ev.parked([ok(call('h'))], [{ call: call('a') }, { call: call('b') }]),
          ev.decided({ a: { type: 'approve' }, b: { type: 'reject' } }),
        )[0],
    ],
    ['steering', () => steering([call('a')])],
    ['finalizing', () => finalizing('text')],
    ['stopped', () => drive(finalizing('text'), ev.accepted({ ok: true }))[0]],
    ['failed', () => drive(newTurn(), { type: 'nope' })[0]],
    ['cancelled', () => drive(newTurn(), ev.cancel('bye'))[0]],
  ];

  it.each(samples)('a %s state round-trips through JSON text and as an object', (status, make) => {
    const state = make();
    expect(state.status).toBe(status);
    expect(parseTurnState(JSON.stringify(state))).toEqual(state);
    expect(parseTurnState(JSON.parse(JSON.stringify(state)))).toEqual(state);
  });

  it('keeps decisions keyed by __proto__ as own data', () => {
    const p = call('__proto__');
    const parked = drive(dispatching([p, call('a')]), ev.parked([], [{ call: p }, { call: call('a') }]))[0];
    const text = JSON.stringify(parked).replace('"decisions":{}', '"decisions":{"__proto__":{"type":"approve"}}');
    const state = parseTurnState(text);
    expect(Object.hasOwn(state.batch?.decisions ?? {}, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(state.batch?.decisions)).toBe(Object.prototype);
  });

  const plain = (state: TurnState) => JSON.parse(JSON.stringify(state)) as Record<string, unknown>;
  const valid = () => plain(steering([call('a')]));
  const validDispatching = () => plain(dispatching([call('a')]));
  const validParked = () =>
    plain(drive(dispatching([call('h'), call('a')]), ev.parked([ok(call('h'))], [{ call: call('a') }]))[0]);
  const withBatch = (state: Record<string, unknown>, changes: Record<string, unknown>) => ({
    ...state,
    batch: { ...(state.batch as object), ...changes },
  });
  const garbage: Array<[string, unknown, string]> = [
    ['not JSON', '{"version":', '(root)'],
    ['an array', [], '(root)'],
    ['null', null, '(root)'],
    ['no version', { ...valid(), version: undefined }, 'version'],
    ['version 0', { ...valid(), version: 0 }, 'version'],
    ['an empty id', { ...valid(), id: '' }, 'id'],
    ['an unknown status', { ...valid(), status: 'thinking' }, 'status'],
    ['bad limits', { ...valid(), limits: { maxIterations: 0 } }, 'limits.maxIterations'],
    ['limits not an object', { ...valid(), limits: 3 }, 'limits'],
    ['a negative round', { ...valid(), round: -1 }, 'round'],
    ['usage missing', { ...valid(), usage: undefined }, 'usage'],
    ['a fractional token count', { ...valid(), usage: { ...(valid().usage as object), inputTokens: 1.5 } }, 'usage.inputTokens'],
    ['a negative cost', { ...valid(), usage: { ...(valid().usage as object), cost: -1 } }, 'usage.cost'],
    ['an unknown forced reason', { ...valid(), forced: 'bored' }, 'forced'],
    ['a batch while steering', { ...valid(), batch: validParked().batch }, 'batch'],
    ['no batch while dispatching', { ...validDispatching(), batch: null }, 'batch'],
    ['a batch that is an array', { ...validDispatching(), batch: [] }, 'batch'],
    ['calls not an array', withBatch(validDispatching(), { calls: {} }), 'batch.calls'],
    ['no calls', withBatch(validDispatching(), { calls: [] }), 'batch.calls'],
    ['a call without a name', withBatch(validDispatching(), { calls: [{ id: 'a', input: {} }] }), 'batch.calls[0]'],
    ['a call id repeated', withBatch(validDispatching(), { calls: [call('a'), call('a')] }), 'batch.calls[1].id'],
    ['notExecuted with null', withBatch(validDispatching(), { notExecuted: [null] }), 'batch.notExecuted[0]'],
    ['a held result while dispatching', withBatch(validDispatching(), { held: [ok(call('a'))] }), 'batch.held'],
    ['an unknown batch field', withBatch(validDispatching(), { executing: null }), 'batch.executing'],
    [
      'a held result without isError',
      withBatch(validParked(), { held: [{ callId: 'h', name: 'x', output: 1 }] }),
      'batch.held[0]',
    ],
    ['a held result for a call not sent', withBatch(validParked(), { held: [ok(call('zz'))] }), 'batch.held[0].callId'],
    ['a call neither held nor parked', withBatch(validParked(), { held: [] }), 'batch.held'],
    [
      'a call both held and parked',
      withBatch(validParked(), { held: [ok(call('h')), ok(call('a'))] }),
      'batch.parked[0].call.id',
    ],
    ['a parked entry without a call', withBatch(validParked(), { parked: [{ reason: 'x' }] }), 'batch.parked[0].call'],
    [
      'no parked call while awaiting_approval',
      withBatch(validParked(), { held: [ok(call('h')), ok(call('a'))], parked: [] }),
      'batch.parked',
    ],
    ['an invalid decision', withBatch(validParked(), { decisions: { a: { type: 'maybe' } } }), 'batch.decisions.a'],
    [
      'a decision for a call not parked',
      withBatch(validParked(), { decisions: { h: { type: 'approve' } } }),
      'batch.decisions.h',
    ],
    ['executing_approved with an undecided call', { ...validParked(), status: 'executing_approved' }, 'batch.decisions'],
    [
      'executing_approved with nothing approved',
      withBatch({ ...validParked(), status: 'executing_approved' }, { decisions: { a: { type: 'reject' } } }),
      'batch.decisions',
    ],
    ['lastRequest without final', { ...valid(), lastRequest: { iteration: 1 } }, 'lastRequest.final'],
    ['a numeric candidate', { ...valid(), candidate: 3 }, 'candidate'],
    ['an outcome on a live status', { ...valid(), outcome: { status: 'cancelled', reason: 'x' } }, 'outcome'],
    ['a terminal status without outcome', { ...valid(), status: 'stopped' }, 'outcome'],
    [
      'an outcome of another status',
      { ...valid(), status: 'failed', outcome: { status: 'cancelled', reason: 'x' } },
      'outcome.status',
    ],
    [
      'an unknown stop reason',
      { ...valid(), status: 'stopped', outcome: { status: 'stopped', stopReason: 'tired', output: null } },
      'outcome.stopReason',
    ],
  ];

  it.each(garbage)('%s -> TurnStateError naming the field', (_name, input, field) => {
    let thrown: unknown;
    try {
      parseTurnState(input);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(TurnStateError);
    expect((thrown as TurnStateError).field).toBe(field);
    expect((thrown as TurnStateError).message).toContain(field);
  });

  it('rejects a state written by a newer version, saying what to do', () => {
    const newer = { ...valid(), version: TURN_STATE_VERSION + 1 };
    expect(() => parseTurnState(newer)).toThrow(TurnStateError);
    expect(() => parseTurnState(newer)).toThrow(/newer turnkit.*upgrade @turnkit\/core/);
  });

  it('a state without limits is garbage (TurnStateError naming limits)', () => {
    const { limits: _dropped, ...truncated } = valid();
    expect(() => parseTurnState(truncated)).toThrow(TurnStateError);
  });
});

describe('batchSignature', () => {
  it('keeps a `__proto__` key (JSON.parse makes it an own key) so different inputs differ', () => {
    const a = call('a', 'read', JSON.parse('{"__proto__":{"path":"/etc/a"}}'));
    const b = call('b', 'read', JSON.parse('{"__proto__":{"path":"/etc/b"}}'));
    expect(batchSignature([a])).not.toBe(batchSignature([b]));
    expect(batchSignature([a])).toBe('[["read",{"__proto__":{"path":"/etc/a"}}]]');
  });

  it('ignores call ids', () => {
    expect(batchSignature([call('a', 'search', { q: 1 })])).toBe(batchSignature([call('zz', 'search', { q: 1 })]));
  });

  it('ignores key order at every depth', () => {
    const one = call('a', 'search', { q: 'x', opts: { b: [1, { d: 1, c: 2 }], a: null } });
    const two = call('b', 'search', { opts: { a: null, b: [1, { c: 2, d: 1 }] }, q: 'x' });
    expect(batchSignature([one])).toBe(batchSignature([two]));
  });

  it('depends on call order, names, inputs and array order', () => {
    const a = call('1', 'search', { q: 1 });
    const b = call('2', 'fetch', { q: 1 });
    expect(batchSignature([a, b])).not.toBe(batchSignature([b, a]));
    expect(batchSignature([a])).not.toBe(batchSignature([b]));
    expect(batchSignature([call('1', 'search', { q: 2 })])).not.toBe(batchSignature([a]));
    expect(batchSignature([call('1', 'x', [1, 2])])).not.toBe(batchSignature([call('1', 'x', [2, 1])]));
    expect(batchSignature([a])).not.toBe(batchSignature([a, a]));
  });
});

describe('isTerminal', () => {
  it('is true exactly for stopped, failed and cancelled', () => {
    const statuses = [
      'ready',
      'calling_model',
      'dispatching',
      'awaiting_approval',
      'executing_approved',
      'steering',
      'finalizing',
      'stopped',
      'failed',
      'cancelled',
    ] as const;
    const terminal = statuses.filter((status) => isTerminal({ ...newTurn(), status }));
    expect(terminal).toEqual(['stopped', 'failed', 'cancelled']);
    expect(isTerminal(drive(finalizing(), ev.accepted(1))[0])).toBe(true);
    expect(isTerminal(finalizing())).toBe(false);
  });
});

describe('limits checked once', () => {
  it('a turn made with the limits of another shares them, frozen; changed copies are checked again', () => {
    const first = createTurn({ id: 'a', limits: { maxIterations: 3, loopExemptTools: ['read'], budget: { maxToolCalls: 4 } } });
    const second = createTurn({ id: 'b', limits: first.limits });
    expect(second.limits).toBe(first.limits);
    expect(Object.isFrozen(first.limits)).toBe(true);
    expect(Object.isFrozen(first.limits.loopExemptTools)).toBe(true);
    expect(Object.isFrozen(first.limits.budget)).toBe(true);
    expect(() => createTurn({ id: 'c', limits: { ...first.limits, maxIterations: 0 } })).toThrow(/limits\.maxIterations/);
    expect(createTurn({ id: 'd', limits: { ...first.limits, maxIterations: 5 } }).limits.maxIterations).toBe(5);
    // The defaults too: a turn made without limits hands on the same frozen defaults.
    const plain = createTurn({ id: 'e' });
    expect(createTurn({ id: 'f', limits: plain.limits }).limits).toBe(plain.limits);
    expect(Object.isFrozen(plain.limits)).toBe(true);
  });
});
