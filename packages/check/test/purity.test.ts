// The purity invariants (2 and 3): a reducer that mutates what it is given, that answers twice
// differently, or that reads a state differently from its JSON text is caught and named; and the
// one run that serves core's step (`frozenRoundTripHolds`) says no to each of them, so that the
// re-runs that name the invariant take over.

import { describe, expect, it } from 'vitest';
import { createTurn, step, type TurnState } from '@turnkit/core';
import { checkInvariants, traceFrom, type StepFunction } from '@turnkit/check';
import { frozenRoundTripHolds, type TraceStep } from '../src/invariants.ts';

const limits = { maxIterations: 2, loopThreshold: 2, maxOutputRepairs: 1 };
const EVENTS: readonly unknown[] = [
  { type: 'start' },
  {
    type: 'model_response',
    message: { role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: 'read', input: { path: 'a' } }] },
    finishReason: 'tool_calls',
    usage: { inputTokens: 3, outputTokens: 2 },
  },
];

/** The trace of EVENTS under `run` (each step recorded with what `run` gave). */
function traceOf(run: StepFunction): readonly TraceStep[] {
  return traceFrom(createTurn({ id: 'turn-1', limits }), EVENTS, run).steps;
}

/** Writes to the state it is given (strict code: on a frozen state this throws). */
const mutatesState: StepFunction = (state, event) => {
  const result = step(state, event);
  (state as { round: number }).round = state.round;
  return result;
};

/** Writes to the event it is given. */
const mutatesEvent: StepFunction = (state, event) => {
  const result = step(state, event);
  if (event !== null && typeof event === 'object') (event as { seen?: boolean }).seen = true;
  return result;
};

/** Answers differently each time it is asked (a count of its calls in its result). */
let calls = 0;
const nondeterministic: StepFunction = (state, event) => {
  const [next, effects] = step(state, event);
  calls += 1;
  return [{ ...next, round: next.round + calls } as TurnState, effects];
};

/** Reads a field that a JSON text leaves out (one it set to `undefined`): a JSON copy goes another way. */
const readsWhatJsonDrops: StepFunction = (state, event) => {
  const [next, effects] = step(state, event);
  const round = 'mark' in state ? next.round : next.round + 1;
  return [{ ...next, round, mark: undefined } as TurnState, effects];
};

describe('the purity invariants', () => {
  it("core's step passes the one run on every step of the trace", () => {
    const steps = traceOf(step);
    expect(steps).toHaveLength(EVENTS.length);
    for (const record of steps) expect(frozenRoundTripHolds(record, step)).toBe(true);
    expect(checkInvariants({ limits: steps[0]!.state.limits, steps })).toEqual([]);
  });

  const cases: Array<[string, StepFunction, 2 | 3, RegExp]> = [
    ['mutates the state it is given', mutatesState, 2, /step mutated the state it was given|deep-frozen/],
    ['mutates the event it is given', mutatesEvent, 2, /step mutated the event it was given|deep-frozen/],
    [
      'answers differently when asked again',
      nondeterministic,
      2,
      /deep-frozen copies of the state and event gave a different result/,
    ],
    ['reads a field its JSON text leaves out', readsWhatJsonDrops, 3, /JSON round trip of the state gave a different result/],
  ];
  for (const [name, run, invariant, message] of cases) {
    it(`a reducer that ${name} fails the one run, and the re-runs name invariant ${invariant}`, () => {
      const steps = traceOf(run);
      // The first step after the start: a state with a call to answer.
      const record = steps[1]!;
      expect(frozenRoundTripHolds(record, run)).toBe(false);
      const found = checkInvariants({ limits: record.state.limits, steps: [record] }, { step: run, only: [2, 3] });
      expect(found.map((v) => v.invariant)).toContain(invariant);
      expect(found.find((v) => v.invariant === invariant)?.message).toMatch(message);
    });
  }
});
