// The ten invariants of docs/turn-contract.md, each a fast-check property over generated
// turns: limits plus 40–60 event choices, mostly plausible replies to the last blocking effect,
// some random model replies, fatal and malformed events, random JSON and arbitrary values. A run
// feeds events until the turn ends plus AFTER_END more (terminal states must absorb them).
// The properties are unseeded on purpose; fast-check prints the seed and the shrunk scenario of
// a failure, and `{ seed, path }` replays it.

import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isTerminal, step, type TurnStatus } from '@turnkit/core';
import { arbitraryChoice, eventFromChoice } from '../src/arbitraries.ts';
import { arbitraryEventScenario, checkInvariants, runEventScenario } from '@turnkit/check';
import { deepClone, deepFreeze, type InvariantNumber, type StepTrace } from '../src/invariants.ts';
import { outcomeLabel } from '../src/explore.ts';
import { testLog } from '../../../test-log.ts';

const NUM_RUNS = 1000;
const MIN_EVENTS = 40;
const MAX_EVENTS = 60;
const AFTER_END = 3;
/** Fewest of the NUM_RUNS turns that must reach each rare outcome (measured: 60+ each). */
const MIN_RUNS_EACH = 20;
/** Least average number of events a turn handles before it ends (measured: about 19.5). */
const MIN_AVERAGE_LIVE = 15;
testLog(
  `invariant properties: numRuns=${NUM_RUNS}, ${MIN_EVENTS}..${MAX_EVENTS} event choices per run (maxLength ${MAX_EVENTS}), used up to the end of the turn plus ${AFTER_END}`,
);

const scenarios = arbitraryEventScenario({ minEvents: MIN_EVENTS, maxEvents: MAX_EVENTS, afterEnd: AFTER_END });

const INVARIANTS: ReadonlyArray<readonly [InvariantNumber, string]> = [
  [1, 'step never throws, for any reachable state and any value passed as an event'],
  [2, 'step is deterministic and never mutates its arguments (deep-frozen inputs work)'],
  [3, 'step on a JSON round trip of the state is the same; every state passes parseTurnState'],
  [4, 'terminal states absorb every event: same object, no effects'],
  [5, 'at most one blocking effect, last; done exactly when the status becomes terminal'],
  [6, 'every appended tool call gets exactly one result, in call order, before the next assistant message and done'],
  [7, 'model calls <= (maxIterations + 1 + maxOutputRepairs) * (1 + maxModelRetries) and <= maxModelCalls'],
  [8, 'no call id is dispatched or executed twice; no parked call runs without approve'],
  [9, 'round and every usage counter never decrease'],
  [10, 'loopThreshold identical batches in a row never dispatch the last; a loop ends after one forced final call'],
];

/** Steps taken from a non-terminal state: the live part of the turn. */
const liveSteps = (trace: StepTrace): number => trace.steps.filter((s) => !isTerminal(s.state)).length;

describe('the invariants of the turn contract hold on generated turns', () => {
  for (const [invariant, title] of INVARIANTS) {
    it(`invariant ${invariant}: ${title}`, () => {
      fc.assert(
        fc.property(scenarios, (scenario) => {
          const { trace } = runEventScenario(scenario);
          // A run uses every choice, or stops exactly AFTER_END events past the end of the turn.
          const afterEnd = trace.steps.length - liveSteps(trace);
          expect(trace.steps.length === scenario.choices.length || afterEnd === AFTER_END).toBe(true);
          expect(checkInvariants(trace, { only: [invariant] })).toEqual([]);
        }),
        { numRuns: NUM_RUNS },
      );
    });
  }

  it('the generated turns are mostly live, and reach every status, every way a turn ends, approvals and repairs', () => {
    /** Per status, outcome or feature: the number of runs that reached it. */
    const runs = new Map<string, number>();
    const handled = new Map<TurnStatus, number>();
    let events = 0;
    let live = 0;
    fc.assert(
      fc.property(scenarios, (scenario) => {
        const { trace } = runEventScenario(scenario);
        events += trace.steps.length;
        live += liveSteps(trace);
        const reached = new Set<string>();
        for (const s of trace.steps) {
          // A status counts when a step starts from it or enters it: the first step starts from ready.
          reached.add(s.state.status).add(s.next.status);
          handled.set(s.state.status, (handled.get(s.state.status) ?? 0) + 1);
          if (s.effects.some((e) => e.type === 'execute_approved')) reached.add('approved calls executed');
          if (s.next.repairs > s.state.repairs) reached.add('output repaired');
        }
        const last = trace.steps[trace.steps.length - 1]?.next;
        if (last !== undefined && isTerminal(last)) reached.add(outcomeLabel(last));
        for (const key of reached) runs.set(key, (runs.get(key) ?? 0) + 1);
      }),
      { numRuns: NUM_RUNS },
    );
    const average = live / NUM_RUNS;
    testLog(
      `coverage over ${NUM_RUNS} runs: ${events} events, ${live} live (before the end; ${average.toFixed(1)} per run on average).`,
      'Events handled per status:',
      Object.fromEntries(handled),
      'Runs reaching each status, outcome and feature:',
      Object.fromEntries([...runs].sort((a, b) => a[1] - b[1])),
    );
    expect(average).toBeGreaterThanOrEqual(MIN_AVERAGE_LIVE);
    const statuses: TurnStatus[] = [
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
    ];
    for (const status of statuses) expect(runs.get(status) ?? 0, status).toBeGreaterThan(0);
    const rare = [
      'stopped:completed',
      'stopped:max_iterations',
      'stopped:loop_detected',
      'stopped:budget_exhausted',
      'stopped:hook_stopped',
      'failed:output_invalid',
      'failed:unexpected_event',
      'awaiting_approval',
      'approved calls executed',
      'output repaired',
    ];
    for (const key of rare) expect(runs.get(key) ?? 0, key).toBeGreaterThanOrEqual(MIN_RUNS_EACH);
  });
});

describe('step on copies', () => {
  it('gives the same result on a JSON round-tripped state and on deep-frozen inputs', () => {
    fc.assert(
      fc.property(arbitraryEventScenario({ minEvents: 0, maxEvents: 40 }), arbitraryChoice(), (scenario, choice) => {
        const { trace } = runEventScenario(scenario);
        const state = trace.steps[trace.steps.length - 1]?.next ?? trace.steps[0]?.state;
        if (state === undefined) return;
        const event = eventFromChoice(state, choice);
        const expected = step(state, event);
        const revived = step(JSON.parse(JSON.stringify(state)), event);
        const frozen = step(deepFreeze(deepClone(state)), deepFreeze(deepClone(event)));
        expect(isDeepStrictEqual(revived, expected)).toBe(true);
        expect(isDeepStrictEqual(frozen, expected)).toBe(true);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
