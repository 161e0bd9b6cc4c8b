// The explorers' node keys are exact: the Interner gives two values one id exactly when their JSON
// texts are equal, so a visited set keyed by ids counts the same states and nodes a set keyed by
// JSON texts did. Checked on random JSON and on values JSON writes in its own way, each compared
// with many others through one interner (as an exploration uses it). On the real states, the
// explorations of test/explore.test.ts count the states and transitions docs/model-checking.md shows.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Interner } from '../src/intern.js';

const NUM_RUNS = 300;

/** Values JSON writes in its own way: -0, NaN, undefined and functions in objects and arrays, a Date, a toJSON method, keys in another order. */
const odd = fc.constantFrom<unknown>(
  -0,
  0,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  null,
  undefined,
  [undefined, () => 1],
  [null, null],
  { a: undefined, b: 1 },
  { b: 1 },
  { b: 1, a: 2 },
  { a: 2, b: 1 },
  new Date(0),
  new Date(0).toJSON(),
  { toJSON: () => 'x' },
  'x',
  '1',
  1,
  { '1': 'a', '0': 'b' },
  ['b', 'a'],
  Object.assign(Object.create(null) as object, { a: 1 }),
  { a: 1 },
);

/** Up to 4 levels of JSON (and of the odd values), where small values repeat often. */
const value: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    fc.constantFrom<unknown>(0, 1, 'a', 'b', true, false, null),
    odd,
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c', '0', '__proto__'), tie('v'), { maxKeys: 3 }),
  ),
})).v;

describe('Interner: ids are equal exactly when JSON texts are', () => {
  it(`random values, 12 a run through one interner (numRuns ${NUM_RUNS})`, () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 2, maxLength: 12 }), (values) => {
        const interner = new Interner();
        const withText = values.filter((v) => JSON.stringify(v) !== undefined);
        const ids = withText.map((v) => interner.idOf(v));
        const texts = withText.map((v) => JSON.stringify(v));
        for (let i = 0; i < withText.length; i++)
          for (let j = 0; j < withText.length; j++) expect(ids[i] === ids[j]).toBe(texts[i] === texts[j]);
        // Asked again (kept per object), an id does not change.
        expect(withText.map((v) => interner.idOf(v))).toEqual(ids);
      }),
      { numRuns: NUM_RUNS, seed: 7 },
    );
  });

  it('a bigint throws as in JSON.stringify', () => {
    expect(() => new Interner().idOf({ a: 1n })).toThrow(TypeError);
  });
});
