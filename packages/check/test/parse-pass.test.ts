// The parse check as a second pass on a worker thread gives the exploration the same result as
// the check inline: the same counts, and the same violations in the same order with the same
// (shortest) paths, the parse problems among the per-edge ones. The worker runs the package's
// built module (dist/parse-worker.js: `npx tsc -b`, which `pnpm test` runs first).
import { describe, expect, it } from 'vitest';
import { step, type Effect, type TurnState } from '@turnkit/core';
import type { StepFunction } from '@turnkit/check';
import { exploreTurnWith } from '../src/explore.ts';

/**
 * From the second model call on, the state carries a key parseTurnState refuses (a parse problem,
 * found once per distinct state) and the step emits a `done` that ends nothing (invariant 5, on
 * every such edge).
 */
const addsUnknownKey: StepFunction = (state, event) => {
  const [next, effects] = step(state, event);
  if (next.usage.modelCalls < 2 || next === state) return [next, effects];
  const marked = { ...next, note: 'not a turn-state key' } as TurnState;
  const done: Effect = { type: 'done', outcome: { status: 'cancelled', reason: 'never' } } as Effect;
  return [marked, next.outcome === null ? [done, ...effects] : effects];
};

describe('the parse pass on a worker thread', () => {
  it('gives the same result as the parse check inline (maxIterations 1, depth 8, 12 violations kept)', () => {
    const options = {
      limits: { maxIterations: 1, loopThreshold: 2, maxOutputRepairs: 1 },
      maxDepth: 8,
      step: addsUnknownKey,
      maxViolations: 12,
    };
    const { ms: _a, parseWorker: onWorker, ...withWorker } = exploreTurnWith(options, 1);
    const { ms: _b, parseWorker: onThisThread, ...inline } = exploreTurnWith(options, Number.POSITIVE_INFINITY);
    expect(onWorker, 'the worker did not start: build the package (npx tsc -b)').toBe(true);
    expect(onThisThread).toBe(false);
    expect(withWorker).toEqual(inline);
    const invariants = new Set(inline.violations.map((v) => v.invariant));
    expect([...invariants].sort()).toEqual([3, 5]);
    expect(inline.violations.some((v) => /^parseTurnState rejected the state/.test(v.message))).toBe(true);
    expect(inline.violations).toHaveLength(12);
    expect(inline.violationCount).toBeGreaterThan(12);
    // In the order an inline check meets them: a state's parse problem right after the `done` of
    // the edge that first reached it.
    inline.violations.forEach((v, i) => {
      if (v.invariant !== 3) return;
      expect(inline.violations[i - 1]).toMatchObject({ invariant: 5, path: v.path });
    });
    // The shortest first: paths never get shorter down the list.
    const lengths = inline.violations.map((v) => v.path.length);
    expect(lengths).toEqual([...lengths].sort((a, b) => a - b));
  });
});
