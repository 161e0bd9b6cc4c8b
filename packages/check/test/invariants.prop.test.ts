// The ten invariants of shared/design/turn-model.md §7, each a fast-check property over generated
// turns: limits plus 40–60 events, mostly plausible replies to the last blocking effect, some
// random model replies, fatal and malformed events, random JSON and arbitrary values.

import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { step, type TurnStatus } from '@turnkit/core';
import {
  arbitraryChoice,
  arbitraryScenario,
  checkInvariants,
  deepClone,
  deepFreeze,
  eventFromChoice,
  outcomeLabel,
  runScenario,
  type InvariantNumber,
} from '@turnkit/check';

const NUM_RUNS = 1000;
const MIN_EVENTS = 40;
const MAX_EVENTS = 60;
console.log(`invariant properties: numRuns=${NUM_RUNS}, events per run ${MIN_EVENTS}..${MAX_EVENTS} (maxLength ${MAX_EVENTS})`);

const scenarios = arbitraryScenario({ minEvents: MIN_EVENTS, maxEvents: MAX_EVENTS });

const INVARIANTS: ReadonlyArray<readonly [InvariantNumber, string]> = [
  [1, 'step never throws, for any reachable state and any value passed as an event'],
  [2, 'step is deterministic and never mutates its arguments (deep-frozen inputs work)'],
  [3, 'step on a JSON round trip of the state is the same; every state passes parseTurnState'],
  [4, 'terminal states absorb every event: same object, no effects'],
  [5, 'at most one blocking effect, last; done exactly when the status becomes terminal'],
  [6, 'every appended tool call gets exactly one result, in call order, before the next assistant message and done'],
  [7, 'model calls <= maxIterations + 1 + maxOutputRepairs and <= maxModelCalls'],
  [8, 'no call id is dispatched or executed twice; no parked call runs without approve'],
  [9, 'round and every usage counter never decrease'],
  [10, 'loopThreshold identical batches in a row never dispatch the last; a loop ends after one forced final call'],
];

describe('the invariants of §7 hold on generated turns', () => {
  for (const [invariant, title] of INVARIANTS) {
    it(`invariant ${invariant}: ${title}`, () => {
      fc.assert(
        fc.property(scenarios, (scenario) => {
          const { trace } = runScenario(scenario);
          expect(trace.steps.length).toBeGreaterThanOrEqual(MIN_EVENTS);
          expect(checkInvariants(trace, { only: [invariant] })).toEqual([]);
        }),
        { numRuns: NUM_RUNS },
      );
    });
  }

  it('the generated turns reach every status and every way a turn ends', () => {
    const statuses = new Map<TurnStatus, number>();
    const outcomes = new Map<string, number>();
    let events = 0;
    fc.assert(
      fc.property(scenarios, (scenario) => {
        const { trace } = runScenario(scenario);
        events += trace.steps.length;
        for (const s of trace.steps) statuses.set(s.next.status, (statuses.get(s.next.status) ?? 0) + 1);
        const last = trace.steps[trace.steps.length - 1]?.next;
        if (last !== undefined) outcomes.set(outcomeLabel(last), (outcomes.get(outcomeLabel(last)) ?? 0) + 1);
        statuses.set('ready', (statuses.get('ready') ?? 0) + (trace.steps[0]?.state.status === 'ready' ? 1 : 0));
      }),
      { numRuns: NUM_RUNS },
    );
    console.log(`coverage over ${NUM_RUNS} runs, ${events} events: statuses`, Object.fromEntries(statuses), 'last status/outcome', Object.fromEntries(outcomes));
    const all: TurnStatus[] = ['ready', 'calling_model', 'dispatching', 'awaiting_approval', 'steering', 'finalizing', 'stopped', 'failed', 'cancelled'];
    for (const status of all) expect(statuses.get(status) ?? 0, status).toBeGreaterThan(0);
    for (const reason of ['stopped:completed', 'stopped:max_iterations', 'stopped:loop_detected', 'stopped:budget_exhausted', 'stopped:hook_stopped', 'failed:output_invalid', 'failed:unexpected_event']) {
      expect(outcomes.get(reason) ?? 0, reason).toBeGreaterThan(0);
    }
  });
});

describe('step on copies', () => {
  it('gives the same result on a JSON round-tripped state and on deep-frozen inputs', () => {
    fc.assert(
      fc.property(arbitraryScenario({ minEvents: 0, maxEvents: 40 }), arbitraryChoice(), (scenario, choice) => {
        const { trace } = runScenario(scenario);
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
