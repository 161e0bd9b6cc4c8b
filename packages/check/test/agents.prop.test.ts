// The multi-agent invariants (A1–A6 of explore-agents.ts) on generated paths of a parent with one
// child, with limits too large for an exhaustive run: fast-check chooses the events, and the step
// at which the path cancels (or none).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { walkAgents } from '../src/explore-agents.js';
import { testLog } from '../../../test-log.ts';

const NUM_RUNS = 300;
const MAX_STEPS = 80;

describe(`a parent with one child, generated paths (numRuns ${NUM_RUNS}, at most ${MAX_STEPS} events, fixed seed)`, () => {
  it('keeps A1–A6 on every edge, whatever the limits; at least 50 paths run a child, at least 5 park a call in it', () => {
    const limits = fc.record({
      maxIterations: fc.integer({ min: 1, max: 6 }),
      maxModelRetries: fc.integer({ min: 0, max: 1 }),
      budget: fc.record({ maxModelCalls: fc.integer({ min: 1, max: 12 }), maxToolCalls: fc.integer({ min: 1, max: 8 }) }),
    });
    let delegated = 0;
    let parkedInChild = 0;
    fc.assert(
      fc.property(
        limits,
        limits,
        fc.array(fc.nat(), { minLength: MAX_STEPS / 2, maxLength: MAX_STEPS }),
        fc.option(fc.nat({ max: MAX_STEPS }), { nil: undefined }),
        (parent, child, choices, cancelAt) => {
          const { violations, path } = walkAgents({ parent, child, choices, ...(cancelAt === undefined ? {} : { cancelAt }) });
          expect(violations).toEqual([]);
          if (path.some((label) => label.startsWith('child:'))) delegated += 1;
          if (path.includes('child:tools_parked')) parkedInChild += 1;
        },
      ),
      { numRuns: NUM_RUNS, seed: 20261127 },
    );
    testLog(`agents property: ${delegated} of ${NUM_RUNS} paths ran a child, ${parkedInChild} parked a child's call`);
    expect(delegated).toBeGreaterThanOrEqual(50);
    expect(parkedInChild).toBeGreaterThanOrEqual(5);
  });
});
