// Mutation sanity: four deliberate bugs, each applied as a wrapper around the real `step`, and
// both the exhaustive exploration and the fast-check properties must catch every one. If a
// checker stopped checking, these tests would notice.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { step, type Effect, type TurnState } from '@turnkit/core';
import { arbitraryEventScenario, checkInvariants, exploreTurn, runEventScenario, type StepFunction } from '@turnkit/check';
import type { InvariantNumber } from '../src/invariants.ts';
import { testLog } from '../../../test-log.ts';

/** Bug 1: forgets to count issued model calls, so `maxModelCalls` never bites. */
const forgetsToCount: StepFunction = (state, event) => {
  const [next, effects] = step(state, event);
  if (!effects.some((e) => e.type === 'call_llm')) return [next, effects];
  return [{ ...next, usage: { ...next.usage, modelCalls: state.usage.modelCalls } }, effects];
};

/** Bug 2: appends a batch's results in arrival order (here: reversed) instead of call order. */
const appendsOutOfOrder: StepFunction = (state, event) => {
  const [next, effects] = step(state, event);
  const isResult = (e: Effect): boolean => e.type === 'append' && e.message.role === 'tool';
  const results = effects.filter(isResult).reverse();
  return [next, effects.map((e) => (isResult(e) ? (results.shift() as Effect) : e))];
};

/** Bug 3: runs parked calls straight away instead of waiting for a decision. */
const executesParked: StepFunction = (state, event) => {
  const [next, effects] = step(state, event);
  if (!(state.status === 'dispatching' && next.status === 'awaiting_approval')) return [next, effects];
  const batch = next.batch;
  if (batch === null) return [next, effects];
  const calls = batch.parked.map((p) => p.call);
  // The bug approves on the person's behalf: the state looks consistent, only the events tell.
  const decisions = Object.fromEntries(calls.map((c) => [c.id, { type: 'approve' } as const]));
  const executing: TurnState = { ...next, status: 'executing_approved', batch: { ...batch, decisions } };
  return [executing, [...effects, { type: 'execute_approved', calls }]];
};

/** Bug 4: keeps a parked call's decision after it settled, in a state still waiting (a state step must never make). */
const decidesEveryParkedCall: StepFunction = (state, event) => {
  const [next, effects] = step(state, event);
  if (!(state.status === 'dispatching' && next.status === 'awaiting_approval') || next.batch === null) return [next, effects];
  const decisions = Object.fromEntries(next.batch.parked.map((p) => [p.call.id, { type: 'reject' } as const]));
  return [{ ...next, batch: { ...next.batch, decisions } }, effects];
};

const MUTANTS: Array<[string, StepFunction, InvariantNumber, RegExp]> = [
  [
    'forgets to count model calls',
    forgetsToCount,
    7,
    /usage.modelCalls is 0 but 1 model calls were issued|exceeds maxModelCalls = 2/,
  ],
  ['appends results out of call order', appendsOutOfOrder, 6, /appended where call-\d+(~\d+)? was next in call order/],
  ['executes a parked call without approval', executesParked, 8, /executed without an approve decision/],
  [
    'parks with every call already decided',
    decidesEveryParkedCall,
    3,
    /breaks a state invariant: 'batch.decisions' decides every parked call/,
  ],
];

const LIMITS = { maxIterations: 3, loopThreshold: 3, maxOutputRepairs: 1, budget: { maxModelCalls: 2 } };
const NUM_RUNS = 300;

describe('mutation sanity: the checks catch deliberate bugs', () => {
  it('the real step passes the same exploration', () => {
    const clean = exploreTurn({ limits: LIMITS, maxDepth: 60 });
    expect(clean.violationCount).toBe(0);
  });

  for (const [name, mutant, invariant, symptom] of MUTANTS) {
    it(`exploration catches a step that ${name} (invariant ${invariant})`, () => {
      // Up to the level of the first violation (the shortest counterexamples), as a user would run it.
      const result = exploreTurn({ limits: LIMITS, maxDepth: 60, step: mutant, stopAtViolation: true });
      const first = result.violations.find((v) => v.invariant === invariant && symptom.test(v.message));
      testLog(
        `mutant "${name}": ${result.violationCount} violations over ${result.transitions} transitions; first: [${first?.path.join(', ')}] ${first?.message}`,
      );
      expect(first).toBeDefined();
      expect(result).toMatchObject({ exhaustive: false, cutOff: 'violation' });
    });

    it(`properties catch a step that ${name} (invariant ${invariant}, numRuns ${NUM_RUNS})`, () => {
      const details = fc.check(
        fc.property(
          arbitraryEventScenario(),
          (scenario) =>
            checkInvariants(runEventScenario(scenario, mutant).trace, { step: mutant, only: [invariant] }).length === 0,
        ),
        { numRuns: NUM_RUNS, seed: 42 },
      );
      expect(details.failed).toBe(true);
      // Sanity: the same property holds for the real step.
      fc.assert(
        fc.property(
          arbitraryEventScenario(),
          (scenario) => checkInvariants(runEventScenario(scenario).trace, { only: [invariant] }).length === 0,
        ),
        { numRuns: NUM_RUNS, seed: 42 },
      );
    });
  }
});
