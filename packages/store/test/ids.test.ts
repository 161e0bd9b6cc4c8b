import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { newTurnId } from '@turnkit/store/internal';

const V7 = /^turn_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const NUM_RUNS = 1000;

describe('newTurnId', () => {
  it('is turn_ and a version 7 UUID whose first 48 bits are the time in milliseconds', () => {
    const now = Date.UTC(2026, 10, 26, 12, 0, 0);
    const id = newTurnId(now);
    expect(id).toMatch(V7);
    expect(Number.parseInt(id.slice(5, 18).replace('-', ''), 16)).toBe(now);
    expect(newTurnId()).not.toBe(newTurnId());
  });

  it(`ids made at later milliseconds sort after earlier ones, as text (numRuns ${NUM_RUNS})`, () => {
    const time = fc.integer({ min: 0, max: 2 ** 48 - 1 });
    fc.assert(
      fc.property(time, time, (a, b) => {
        fc.pre(a !== b);
        const [early, late] = a < b ? [a, b] : [b, a];
        expect(newTurnId(early) < newTurnId(late)).toBe(true);
        expect(newTurnId(late)).toMatch(V7);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
