// A long turn costs the same per step as a short one: the state holds the batch in flight and the
// last batch, never a list that grows with the turn (no timing here: the size of what `step` copies).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTurn, step, type TurnState } from '@turnkit/core';
import { testLog } from '../../../test-log.ts';

const NUM_RUNS = 25;

function afterRounds(rounds: number): { state: TurnState; effectsPerRound: number[] } {
  let state = step(createTurn({ id: 'long', limits: { maxIterations: rounds + 1 } }), { type: 'start', input: 'go' })[0];
  const effectsPerRound: number[] = [];
  for (let round = 0; round < rounds; round++) {
    let effects = 0;
    const reply = { text: '', toolCalls: [{ id: `call_${round}`, name: 'add', input: { a: round, b: 1 } }] };
    for (const event of [
      { type: 'model_responded', response: reply },
      // The result answers the id core gave the call (its own unless its filter took it for a repeat).
      () => ({
        type: 'tools_completed',
        results: [{ callId: state.batch?.calls[0]?.id, name: 'add', output: round + 1, isError: false }],
      }),
      { type: 'compacted' },
    ]) {
      const [next, out] = step(state, typeof event === 'function' ? event() : event);
      state = next;
      effects += out.length;
    }
    effectsPerRound.push(effects);
  }
  return { state, effectsPerRound };
}

// Numbers grow a digit now and then (round, usage, call ids): compare shapes, not digits.
// The call-id filter is a fixed-size bit set: its length is its shape, its bits are not.
const shape = (state: TurnState): string =>
  JSON.stringify({ ...state, callIds: { count: 0, filter: state.callIds.filter.replace(/[^=]/g, 'A') } }).replace(/\d+/g, '0');

describe('a long turn', () => {
  it('keeps a state of the same shape and the same effects per round, however many rounds went before', () => {
    testLog(`long turn: numRuns ${NUM_RUNS}, up to 3,000 rounds, and one of 20,000`);
    const one = afterRounds(1);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3000 }), (rounds) => {
        const long = afterRounds(rounds);
        expect(long.state.status).toBe('calling_model');
        expect(shape(long.state)).toBe(shape(one.state));
        expect(new Set(long.effectsPerRound)).toEqual(new Set(one.effectsPerRound));
      }),
      { numRuns: NUM_RUNS },
    );
    const longest = afterRounds(20_000);
    expect(longest.state.round).toBe(20_000);
    expect(shape(longest.state)).toBe(shape(one.state));
  });
});
