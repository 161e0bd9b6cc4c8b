import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTurn, parseTurnState, step, type TurnState } from '@turnkit/core';
import {
  fromLean,
  LEAN_MARK,
  LIMITS_BASE,
  mapFilters,
  packFilter,
  refLastBatch,
  SAME_AS_BATCH,
  SHORT_KEYS_FROM,
  STATE_BASE,
  STATE_BASES,
  toLean,
  unpackFilter,
} from '../src/sql/lean.js';
import { restoredBudgetUsage, restoredState, storedBudgetUsage, storedState } from '../src/sql/values.js';

const NUM_RUNS = 300;

/** A state as a checkpoint writes it and a claim reads it back. */
function roundTrip(state: TurnState): unknown {
  const stored = storedState(state);
  return restoredState(state.id, JSON.parse(stored.state as string), null);
}

describe('lean rows (fast-check)', () => {
  it(`any object reads back exactly, over any base: keys missing, added, nested, null, __proto__ (numRuns ${NUM_RUNS})`, () => {
    const key = fc.constantFrom('a', 'b', 'c', '__proto__', 'constructor', LEAN_MARK);
    const value = fc.letrec((tie) => ({
      json: fc.oneof({ depthSize: 'small' }, fc.jsonValue({ maxDepth: 1 }), tie('object')),
      object: fc.dictionary(key, tie('json'), { maxKeys: 4 }),
    }));
    fc.assert(
      fc.property(value.object, value.object, (object, base) => {
        const o = JSON.parse(JSON.stringify(object)) as Record<string, unknown>;
        const b = JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
        const lean = JSON.parse(JSON.stringify(toLean(o, b)));
        expect(fromLean(lean, b)).toEqual(o);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('a row without the mark (written before the encoding) is read as it is', () => {
    const full = { status: 'ready', round: 0, usage: { modelCalls: 0 } };
    expect(fromLean(full, STATE_BASE)).toBe(full);
    expect(fromLean(null, STATE_BASE)).toBe(null);
    expect(fromLean([1], LIMITS_BASE)).toEqual([1]);
  });

  it("a fresh turn's state is stored as its null batch (the base's is an empty one; `b`, its short name), then the mark and default limits as the mark, last", () => {
    const stored = storedState(createTurn({ id: 't' }));
    expect(stored.state).toBe(JSON.stringify({ b: null, [LEAN_MARK]: SHORT_KEYS_FROM, limits: { [LEAN_MARK]: 1 } }));
    expect(roundTrip(createTurn({ id: 't', limits: { maxIterations: 3 } }))).toEqual(
      createTurn({ id: 't', limits: { maxIterations: 3 } }),
    );
  });
});

describe('short keys (fast-check)', () => {
  const leaf = fc.jsonValue({ maxDepth: 1 });
  // Keys by where the short names go, with the short names themselves and keys that have none.
  // Mostly keys without a short name among them; one run in six, any of `keys` (the short names too).
  const obj = (keys: readonly string[], value: fc.Arbitrary<unknown>) =>
    fc.oneof(
      { weight: 5, arbitrary: fc.dictionary(fc.constantFrom(...keys.filter((k) => k.length > 1)), value, { maxKeys: 4 }) },
      { weight: 1, arbitrary: fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: 4 }) },
    );
  const call = obj(['id', 'name', 'input', 'i', 'n', 'a', 'x'], leaf);
  const inner = fc.oneof(
    leaf,
    obj(['inputTokens', 'cost', 'modelCalls', 'toolCalls', 'm', 't', 'x'], leaf),
    obj(
      ['calls', 'notExecuted', 'held', 'decisions', 'c', 'n', 'x'],
      fc.oneof(leaf, fc.array(fc.oneof(call, leaf), { maxLength: 3 })),
    ),
    obj(['iteration', 'final', 'attempt', 'i', 'f', 'x'], leaf),
    obj(['count', 'filter', 'n', 'f', 'x'], leaf),
  );
  const top = obj(
    [
      'round',
      'usage',
      'batch',
      'repeats',
      'lastRequest',
      'callIds',
      'status',
      'outcome',
      'r',
      'u',
      'b',
      'p',
      'q',
      'k',
      '__proto__',
      'constructor',
    ],
    inner,
  );
  // A fresh state's keys (so the state is stored lean) with some changed, added or replaced, nested too.
  const state = fc
    .record({
      top,
      usage: obj(['inputTokens', 'cost', 'modelCalls', 'toolCalls', 'm', 't', 'x'], leaf),
      batch: obj(['calls', 'notExecuted', 'held', 'c', 'n', 'x'], fc.array(fc.oneof(call, leaf), { maxLength: 3 })),
      lastRequest: obj(['iteration', 'final', 'attempt', 'i', 'f', 'x'], leaf),
      callIds: obj(['count', 'filter', 'n', 'f', 'x'], leaf),
    })
    .map(({ top, usage, batch, lastRequest, callIds }) => ({
      ...STATE_BASE,
      usage: { ...(STATE_BASE.usage as object), ...usage },
      batch: { ...(STATE_BASE.batch as object), ...batch },
      lastRequest: { iteration: 1, final: false, ...lastRequest },
      callIds: { ...(STATE_BASE.callIds as object), ...callIds },
      ...top,
    }));

  it(`any object a checkpoint stores as a state reads back exactly: keys with short names, keys that are short names already, nested, lists of calls (numRuns ${NUM_RUNS}, seed 4)`, () => {
    let short = 0;
    fc.assert(
      fc.property(state, (object) => {
        const o = JSON.parse(JSON.stringify({ ...object, id: 't' })) as Record<string, unknown>;
        const stored = JSON.parse(storedState(o as unknown as TurnState).state as string);
        if (stored[LEAN_MARK] === SHORT_KEYS_FROM) short += 1;
        expect(restoredState('t', stored, null)).toEqual(o);
      }),
      { numRuns: NUM_RUNS, seed: 4 },
    );
    // Most runs are stored with short keys (the rest: a key that is a short name, or not lean at all).
    expect(short).toBeGreaterThan(NUM_RUNS / 4);
  });

  it("a long turn's round keeps its counters, batch, request and call ids under short names, and reads back whole", () => {
    const turn = step(createTurn({ id: 't', limits: { maxIterations: 20 } }), { type: 'start', input: 'go' })[0];
    const [state] = step(turn, {
      type: 'model_responded',
      response: { text: '', toolCalls: [{ id: 'c0', name: 'echo', input: { round: 0 } }], finishReason: 'tool_calls' },
    });
    const text = storedState(state).state as string;
    const stored = JSON.parse(text) as Record<string, unknown>;
    expect(stored[LEAN_MARK]).toBe(SHORT_KEYS_FROM);
    expect(stored.b).toEqual({ c: [{ i: 'c0', n: 'echo', a: { round: 0 } }] });
    expect(stored.u).toEqual({ m: 1, t: 1 });
    expect(stored.q).toEqual({ i: 1, f: false });
    expect(Object.keys(stored).slice(-5)).toEqual(['p', 'status', 'lastBatch', LEAN_MARK, 'limits']);
    expect(text).not.toMatch(/modelCalls|lastRequest|iteration|callIds/);
    expect(roundTrip(state)).toEqual(state);
    expect(parseTurnState(roundTrip(state))).toEqual(state);
  });

  it('a state with a short name as a key is kept with its keys whole, marked with the previous version (the same base)', () => {
    const state = { ...createTurn({ id: 't' }), round: 2, r: 1 } as unknown as TurnState;
    const stored = JSON.parse(storedState(state).state as string);
    expect(stored).toMatchObject({ round: 2, r: 1, [LEAN_MARK]: SHORT_KEYS_FROM - 1 });
    expect(restoredState('t', stored, null)).toEqual(state);
  });

  it(`a budget usage { total, perTool } is kept as the pair [total, perTool]; anything else as it is; both read back exactly (numRuns ${NUM_RUNS})`, () => {
    expect(storedBudgetUsage({ total: 3, perTool: { echo: 3 } })).toEqual([3, { echo: 3 }]);
    const usage = fc.oneof(
      fc.record({ total: fc.nat(), perTool: fc.dictionary(fc.string(), fc.nat()) }),
      fc.jsonValue({ maxDepth: 2 }).filter((v) => !Array.isArray(v) || v.length !== 2),
    );
    fc.assert(
      fc.property(usage, (u) => {
        const value = JSON.parse(JSON.stringify(u)) as unknown;
        expect(restoredBudgetUsage(JSON.parse(JSON.stringify(storedBudgetUsage(value))))).toEqual(value);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});

describe('rows written against an older base', () => {
  it('a row written before the limits rode in the state (its limits in `state_limits`, the status and mark first) reads back whole', () => {
    const turn = step(createTurn({ id: 't', limits: { maxIterations: 5 } }), { type: 'start', input: 'go' })[0];
    const { id: _id, limits: _limits, ...rest } = turn;
    const older = toLean(rest, STATE_BASES);
    expect(Object.keys(older)[0]).toBe(LEAN_MARK);
    expect(restoredState('t', older, toLean({ ...turn.limits }, LIMITS_BASE))).toEqual(turn);
    // The new layout of the same state: the status, mark and limits last, `state_limits` not read.
    const stored = JSON.parse(storedState(turn).state as string) as Record<string, unknown>;
    expect(Object.keys(stored).slice(-3)).toEqual(['status', LEAN_MARK, 'limits']);
    expect(restoredState('t', stored, { [LEAN_MARK]: 1, maxIterations: 9 })).toEqual(turn);
  });

  it('a lean row of a version 3 state (mark 1) reads back against its own base and migrates to the current state', () => {
    const row = { [LEAN_MARK]: 1, batch: null };
    const full = fromLean(row, STATE_BASES) as Record<string, unknown>;
    expect(full.version).toBe(3);
    expect(full.callIds).toBeUndefined();
    const state = parseTurnState({ ...full, id: 't', limits: fromLean({ [LEAN_MARK]: 1 }, LIMITS_BASE) });
    expect(state.callIds).toEqual({ count: 0, filter: '' });
  });

  it('a mark with no base (a later version, or garbage) is read as it is', () => {
    expect(fromLean({ [LEAN_MARK]: 9, status: 'x' }, STATE_BASES)).toEqual({ [LEAN_MARK]: 9, status: 'x' });
  });
});

describe('call-id filters (fast-check)', () => {
  const filter = fc
    .uint8Array({ minLength: 96, maxLength: 96 })
    .chain((full) => fc.nat({ max: 96 }).map((n) => Buffer.from(full.map((b, i) => (i < n ? b : 0))).toString('base64')));

  it(`any filter of 0 to 768 bits set reads back exactly and is never stored longer (numRuns ${NUM_RUNS})`, () => {
    fc.assert(
      fc.property(filter, (f) => {
        const packed = packFilter(f);
        expect(packed.length).toBeLessThanOrEqual(f.length);
        expect(unpackFilter(packed)).toBe(f);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it("a turn's first call keeps its filter as the two bits it set, in the state and in a child turn's", () => {
    const one = Buffer.alloc(96);
    one[3] = 0b1000_0001;
    const f = one.toString('base64');
    expect(packFilter(f)).toBe('~AYAf');
    const state = { callIds: { count: 1, filter: f }, agents: { agent: 'a', child: { callIds: { count: 1, filter: f } } } };
    const packed = mapFilters(state, packFilter) as typeof state;
    expect(packed.callIds.filter).toBe('~AYAf');
    expect(packed.agents.child.callIds.filter).toBe('~AYAf');
    expect(mapFilters(packed, unpackFilter)).toEqual(state);
    expect(state.callIds.filter).toBe(f); // the state written is not changed
  });

  it('a filter that is not a packed one (empty, a base64 filter, malformed) reads back as it is', () => {
    for (const s of ['', 'AAAA', '~A', '~A*', '~//']) expect(unpackFilter(s)).toBe(s);
    expect(packFilter('not base64')).toBe('not base64');
    expect(mapFilters(null, packFilter)).toBe(null);
  });
});

describe('a lastBatch that repeats its batch', () => {
  const replied = (state: TurnState, input: unknown, id = 'c1'): TurnState =>
    step(state, {
      type: 'model_responded',
      response: { text: '', toolCalls: [{ id, name: 'echo', input: input as never }], finishReason: 'tool_calls' },
    })[0];
  const started = step(createTurn({ id: 't', limits: { maxIterations: 5 } }), { type: 'start', input: 'go' })[0];

  it("is kept as a reference while the batch is the reply's, and reads back exactly", () => {
    const state = replied(started, { text: 'x'.repeat(500) });
    expect(state.lastBatch).toEqual([{ name: 'echo', input: { text: 'x'.repeat(500) } }]);
    const stored = JSON.parse(storedState(state).state as string);
    expect(stored.lastBatch).toBe(SAME_AS_BATCH);
    expect((storedState(state).state as string).split('x'.repeat(500)).length).toBe(2); // the input once
    expect(roundTrip(state)).toEqual(state);
    expect(parseTurnState(roundTrip(state))).toEqual(state);
  });

  it('is kept whole when it differs from the batch (no batch, other calls) or is not a list of names and inputs', () => {
    const state = replied(started, { a: 1 });
    const done = step(state, {
      type: 'tools_completed',
      results: [{ callId: 'c1', name: 'echo', output: 1, isError: false }],
    })[0];
    expect(done.lastBatch).not.toBe(null);
    expect(JSON.parse(storedState(done).state as string).lastBatch).toEqual(done.lastBatch);
    expect(roundTrip(done)).toEqual(done);
    const other = {
      lastBatch: [{ name: 'echo', input: { a: 2 } }],
      batch: { calls: [{ id: 'c', name: 'echo', input: { a: 1 } }] },
    };
    expect(refLastBatch(other)).toBe(other);
    const extra = {
      lastBatch: [{ name: 'echo', input: 1, more: true }],
      batch: { calls: [{ id: 'c', name: 'echo', input: 1 }] },
    };
    expect(refLastBatch(extra)).toBe(extra);
  });
});
