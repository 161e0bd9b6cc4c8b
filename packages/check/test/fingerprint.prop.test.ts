// The structural fingerprints stand for JSON texts: two values get one fingerprint exactly when
// JSON.stringify gives them one text, and reusing the fingerprints of shared objects changes nothing.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTurn, step } from '@turnkit/core';
import { labelledEventsFor } from '../src/alphabet.js';
import { ValueFingerprint } from '../src/fingerprint.js';

const NUM_RUNS = 300;
const SEED = 20261127;

const fingerprint = (hasher: ValueFingerprint, value: unknown): string => {
  hasher.value(value);
  return `${hasher.hi}:${hasher.lo}`;
};

/** JSON values, with the values JSON writes differently from how they are (undefined, -0, NaN) mixed in. */
const value = fc.letrec((tie) => ({
  leaf: fc.oneof(
    fc.string({ maxLength: 6 }),
    fc.integer({ min: -3, max: 3 }),
    fc.double(),
    fc.constantFrom(null, true, false, undefined, -0, Number.NaN, '1', 1.5, '1.5'),
  ),
  node: fc.oneof(
    { depthSize: 'small' },
    tie('leaf'),
    fc.array(tie('node'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c', 'ab'), tie('node'), { maxKeys: 3 }),
  ),
})).node;

describe('ValueFingerprint', () => {
  it(`one fingerprint exactly when one JSON text (pairs of values, numRuns ${NUM_RUNS}, fixed seed)`, () => {
    const hasher = new ValueFingerprint({ reuse: false });
    fc.assert(
      fc.property(value, value, (a, b) => {
        // JSON has no text for undefined alone; inside arrays and objects it does.
        fc.pre(a !== undefined && b !== undefined);
        const sameText = JSON.stringify(a) === JSON.stringify(b);
        expect(fingerprint(hasher, a) === fingerprint(hasher, b)).toBe(sameText);
      }),
      { numRuns: NUM_RUNS, seed: SEED },
    );
  });

  it(`a value and its JSON round trip get one fingerprint (numRuns ${NUM_RUNS}, fixed seed)`, () => {
    const hasher = new ValueFingerprint({ reuse: false });
    fc.assert(
      fc.property(value, (a) => {
        fc.pre(a !== undefined);
        expect(fingerprint(hasher, JSON.parse(JSON.stringify(a)))).toBe(fingerprint(hasher, a));
      }),
      { numRuns: NUM_RUNS, seed: SEED },
    );
  });

  it('keys in another order are another text and another fingerprint', () => {
    const hasher = new ValueFingerprint({ reuse: false });
    expect(fingerprint(hasher, { a: 1, b: 2 })).not.toBe(fingerprint(hasher, { b: 2, a: 1 }));
    expect(fingerprint(hasher, { a: 1, b: undefined })).toBe(fingerprint(hasher, { a: 1 }));
  });

  it('with reuse, the fingerprints of the states of a breadth-first walk are the ones made whole (depth 6)', () => {
    const reused = new ValueFingerprint({ reuse: true });
    const whole = new ValueFingerprint({ reuse: false });
    let frontier = [createTurn({ id: 'turn-1', limits: { maxIterations: 2, loopThreshold: 2, maxOutputRepairs: 1 } })];
    let checked = 0;
    for (let depth = 0; depth < 6; depth++) {
      const next = [];
      for (const state of frontier)
        for (const entry of labelledEventsFor(state)) {
          const [after] = step(state, entry.event);
          expect(fingerprint(reused, after)).toBe(fingerprint(whole, after));
          checked += 1;
          if (next.length < 400) next.push(after);
        }
      frontier = next;
    }
    expect(checked).toBeGreaterThan(1000);
  });

  it(`with reuse, a sequence of values sharing nested objects (any depth) gets the fingerprints made whole (numRuns ${NUM_RUNS}, 2..6 values, fixed seed)`, () => {
    /** A new value from `base`: fields replaced by `fresh`, the others shared as they are, at every level. */
    const derive = (base: unknown, fresh: unknown, choice: number): unknown => {
      if (base === null || typeof base !== 'object') return choice % 3 === 0 ? fresh : base;
      if (Array.isArray(base)) return base.map((item, i) => derive(item, fresh, choice >> (i + 1)));
      const out: Record<string, unknown> = {};
      Object.entries(base).forEach(([key, item], i) => {
        out[key] = (choice >> i) % 4 === 0 ? item : derive(item, fresh, choice >> (i + 2));
      });
      if (choice % 5 === 0) out.ab = fresh;
      return out;
    };
    fc.assert(
      fc.property(value, fc.array(fc.tuple(value, fc.nat({ max: 1 << 20 })), { minLength: 1, maxLength: 5 }), (first, steps) => {
        const reused = new ValueFingerprint({ reuse: true });
        const whole = new ValueFingerprint({ reuse: false });
        let current = first;
        expect(fingerprint(reused, current)).toBe(fingerprint(whole, current));
        for (const [fresh, choice] of steps) {
          current = derive(current, fresh, choice);
          expect(fingerprint(reused, current)).toBe(fingerprint(whole, current));
        }
      }),
      { numRuns: NUM_RUNS, seed: SEED },
    );
  });
});
