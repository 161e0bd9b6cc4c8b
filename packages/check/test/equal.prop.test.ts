// The checker's deep equality agrees with isDeepStrictEqual on everything step takes and gives
// (plain JSON values), on values that differ slightly, and falls back to it for other objects.
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deepEqual, deepEqualAlong } from '../src/equal.js';

const NUM_RUNS = 500;

/** A value and a copy of it with one leaf maybe changed (a key dropped, a number negated, a string extended). */
const nearPair = fc
  .jsonValue()
  .chain((value) =>
    fc.tuple(fc.constant(value), fc.constant(structuredClone(value)), fc.nat(), fc.constantFrom('same', 'leaf', 'drop', 'extra')),
  );

function change(value: unknown, at: number, how: string): unknown {
  if (value === null || typeof value !== 'object') {
    if (how === 'same') return value;
    if (typeof value === 'number') return value === 0 ? 1 : -value;
    if (typeof value === 'string') return `${value}!`;
    return how === 'leaf' ? [value] : value;
  }
  const keys = Object.keys(value);
  if (keys.length === 0) return how === 'extra' ? (Array.isArray(value) ? [1] : { added: 1 }) : value;
  const key = keys[at % keys.length] as string;
  const target = value as Record<string, unknown>;
  if (how === 'drop' && !Array.isArray(value)) delete target[key];
  else if (how === 'extra' && !Array.isArray(value)) target[`${key}_extra`] = 1;
  else target[key] = change(target[key], Math.floor(at / keys.length), how);
  return value;
}

/** `change` made as `step` makes a state: new objects along the changed path, the rest shared with `value`. */
function changeShared(value: unknown, at: number, how: string): unknown {
  if (value === null || typeof value !== 'object') return change(value, at, how);
  const keys = Object.keys(value);
  if (keys.length === 0 || how === 'same') return how === 'same' ? value : change(structuredClone(value), at, how);
  const key = keys[at % keys.length] as string;
  const copy = (Array.isArray(value) ? [...value] : { ...value }) as Record<string, unknown>;
  if (how === 'drop' && !Array.isArray(value)) delete copy[key];
  else if (how === 'extra' && !Array.isArray(value)) copy[`${key}_extra`] = 1;
  else copy[key] = changeShared(copy[key], Math.floor(at / keys.length), how);
  return copy;
}

describe('deepEqual', () => {
  it(`deepEqualAlong agrees with deepEqual on values made from two equal values sharing their unchanged parts (numRuns ${NUM_RUNS})`, () => {
    const how = fc.constantFrom('same', 'leaf', 'drop', 'extra');
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(), how, fc.nat(), how, (f, atA, howA, atB, howB) => {
        const s = structuredClone(f);
        const a = changeShared(f, atA, howA);
        const b = changeShared(s, atB, howB);
        expect(deepEqualAlong(a, b, f, s)).toBe(deepEqual(a, b));
        expect(deepEqualAlong(b, a, s, f)).toBe(deepEqual(b, a));
      }),
      { numRuns: NUM_RUNS, seed: 4 },
    );
  });

  it(`agrees with isDeepStrictEqual on JSON values and near copies (numRuns ${NUM_RUNS})`, () => {
    fc.assert(
      fc.property(nearPair, ([value, copy, at, how]) => {
        const other = change(copy, at, how);
        expect(deepEqual(value, other)).toBe(isDeepStrictEqual(value, other));
        expect(deepEqual(value, structuredClone(value))).toBe(true);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('tells apart what isDeepStrictEqual tells apart beyond JSON: -0, holes, prototypes, Maps, Dates', () => {
    const pairs: [unknown, unknown][] = [
      [0, -0],
      [
        // biome-ignore lint/suspicious/noSparseArray: a hole is what this pair tells apart from undefined
        [, 1],
        [undefined, 1],
      ],
      [Object.create(null), {}],
      [new Map([[1, 2]]), new Map([[1, 3]])],
      [new Date(0), new Date(1)],
      [{ a: new Date(0) }, { a: new Date(0) }],
      [[1, 2], { 0: 1, 1: 2 }],
      [{ a: undefined }, {}],
    ];
    for (const [a, b] of pairs) {
      expect(deepEqual(a, b)).toBe(isDeepStrictEqual(a, b));
      expect(deepEqual(b, a)).toBe(isDeepStrictEqual(b, a));
    }
  });
});
