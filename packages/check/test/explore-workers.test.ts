// exploreTurn on worker threads gives the result of the run on one thread: counts, outcomes,
// depth, and where a cut-off bound stops. The workers load the sources as this file does.

import { describe, expect, it } from 'vitest';
import { exploreTurn, type ExploreResult } from '@turnkit/check';
import { workerArgv } from '../src/explore-parallel.js';

const same = (r: ExploreResult) => ({ ...r, ms: 0, storedBytes: 0 });

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
