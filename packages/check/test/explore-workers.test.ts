// exploreTurn on worker threads gives the result of the run on one thread: counts, outcomes,
// depth, and where a cut-off bound stops. The workers load the sources as this file does.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exploreTurn, type ExploreResult } from '@turnkit/check';
import { balancePlan, workerArgv } from '../src/explore-parallel.js';

const same = (r: ExploreResult) => ({ ...r, ms: 0, storedBytes: 0 });

/** Each exploration on workers starts its threads, which load the sources: a few runs only. */
const WORKER_RUNS = 1;
const PLAN_RUNS = 300;

describe('exploreTurn on worker threads', () => {
  it('two workers: the same states, nodes, transitions, outcomes, depth and violations as one thread (maxIterations 1, exhaustive)', () => {
    const limits = { maxIterations: 1, loopThreshold: 2, maxOutputRepairs: 1 };
    const levels: number[] = [];
    const one = exploreTurn({ limits, maxDepth: 60, puritySample: 4 });
    const two = exploreTurn({ limits, maxDepth: 60, puritySample: 4, workers: 2, onProgress: (p) => levels.push(p.states) });
    expect(same(two)).toEqual(same(one));
    expect(one.exhaustive).toBe(true);
    expect(levels).toHaveLength(one.depth);
    expect(levels.at(-1)).toBe(one.states);
  });

  it(`2 or 3 workers: the one-thread result for maxIterations 1, loopThreshold 0..3, repairs 0..1, purity sample 1..8, depth 6..60 (numRuns ${WORKER_RUNS} + 1 example, seed 7)`, () => {
    fc.assert(
      fc.property(
        fc.record({
          loopThreshold: fc.integer({ min: 0, max: 3 }),
          repairs: fc.integer({ min: 0, max: 1 }),
          puritySample: fc.integer({ min: 1, max: 8 }),
          maxDepth: fc.integer({ min: 6, max: 60 }),
          workers: fc.integer({ min: 2, max: 3 }),
        }),
        ({ loopThreshold, repairs, puritySample, maxDepth, workers }) => {
          const limits = { maxIterations: 1, loopThreshold, maxOutputRepairs: repairs };
          const one = exploreTurn({ limits, maxDepth, puritySample });
          const many = exploreTurn({ limits, maxDepth, puritySample, workers });
          expect(same(many)).toEqual(same(one));
        },
      ),
      {
        numRuns: WORKER_RUNS,
        seed: 7,
        examples: [[{ loopThreshold: 2, repairs: 1, puritySample: 4, maxDepth: 9, workers: 3 }]],
      },
    );
  });

  it(`balancePlan: after the gifts every worker holds its share (±1 when out of balance), each node moves at most once, nothing moves when balanced (numRuns ${PLAN_RUNS}, up to 8 workers)`, () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 5000 }), { minLength: 1, maxLength: 8 }), (sizes) => {
        const plan = balancePlan(sizes);
        const total = sizes.reduce((a, b) => a + b, 0);
        const after = [...sizes];
        plan.forEach((gifts, giver) => {
          const moved = gifts.flatMap((g) => [...g.positions]);
          const ascending = moved.every((p, i) => p >= 0 && p < sizes[giver]! && (i === 0 || p > moved[i - 1]!));
          expect(ascending).toBe(true);
          for (const g of gifts) {
            expect(g.to).not.toBe(giver);
            after[giver]! -= g.positions.length;
            after[g.to]! += g.positions.length;
          }
        });
        expect(after.reduce((a, b) => a + b, 0)).toBe(total);
        const mean = total / sizes.length;
        if (plan.every((gifts) => gifts.length === 0)) for (const n of sizes) expect(n).toBeLessThanOrEqual(mean * 1.125 + 8);
        else for (const n of after) expect(Math.abs(n - mean)).toBeLessThan(1);
      }),
      { numRuns: PLAN_RUNS, seed: 7 },
    );
  });

  it('refuses workers with a step or an alphabet of its own, and a worker count out of range', () => {
    const limits = { maxIterations: 1 };
    expect(() => exploreTurn({ limits, maxDepth: 4, workers: 2, step: (s) => [s, []] })).toThrow(/leave out step and events/);
    expect(() => exploreTurn({ limits, maxDepth: 4, workers: 0 })).toThrow(/workers must be a whole number from 1 to 64, got 0/);
  });

  it("start the workers with the process's Node options, less the code and module type of `node -e`", () => {
    // A worker that inherited `--input-type=module` read its CommonJS boot code as a module and never answered.
    expect(workerArgv(false, ['--input-type=module', '-e', 'import x', '--max-old-space-size=4096'])).toEqual([
      '--max-old-space-size=4096',
    ]);
    expect(workerArgv(false, ['-p', '1+1', '--eval=2', '--import', 'tsx'])).toEqual(['--import', 'tsx']);
    expect(workerArgv(true, [])).toEqual(['--conditions=@turnkit/source']);
    // A worker refuses --expose-gc (`pnpm bench --check` runs with it); the process's flag holds in workers anyway.
    expect(workerArgv(false, ['--expose-gc', '--max-old-space-size=4096'])).toEqual(['--max-old-space-size=4096']);
  });
});
