// The store's lean rows over every state a turn reaches: the states of random turns (this
// package's event scenarios) written as a checkpoint writes them and read back as a claim does.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { arbitraryEventScenario, runEventScenario } from '@turnkit/check';
import { parseTurnState, type TurnState } from '@turnkit/core';
import { restoredState, storedState } from '@turnkit/store/internal';

const NUM_RUNS = 300;

/** A state as a checkpoint writes it and a claim reads it back. */
function roundTrip(state: TurnState): unknown {
  const stored = storedState(state);
  return restoredState(state.id, JSON.parse(stored.state as string), null);
}

describe('lean rows (fast-check)', () => {
  it(`every state a turn reaches reads back exactly as it was written, and never longer (numRuns ${NUM_RUNS}, 10–40 events)`, () => {
    fc.assert(
      fc.property(arbitraryEventScenario({ minEvents: 10, maxEvents: 40 }), (scenario) => {
        for (const { next } of runEventScenario(scenario).trace.steps) {
          expect(roundTrip(next)).toEqual(next);
          expect(parseTurnState(roundTrip(next))).toEqual(next);
          // Never longer than the state without its id (the limits ride in it, lean).
          const { id: _id, ...rest } = next;
          expect((storedState(next).state as string).length).toBeLessThanOrEqual(JSON.stringify(rest).length + 8);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
