// Deep equality for what `step` takes and gives: plain objects, arrays and primitives, compared
// the way `isDeepStrictEqual` compares them (the same enumerable own keys, the same kinds,
// primitives by `Object.is`), without its general machinery. Anything else (a Map, a Date, a
// class instance, an array with holes) is left to `isDeepStrictEqual`. Not compared: symbol keys
// and keys of an array beyond its indices (nothing `step` makes has them; JSON drops them).
import { isDeepStrictEqual } from 'node:util';

// `Object.prototype.hasOwnProperty` called on the value: V8 optimizes it in a `for in` loop,
// `Object.hasOwn` there not (a state's walk took 30% less time with it: 2.3 µs instead of 3.3, the
// 22,043 states of maxIterations 2 against their JSON copies, best of 10, alternated).
const ownProperty = Object.prototype.hasOwnProperty;
const hasOwn = (value: object, key: string | number): boolean => ownProperty.call(value, key);

function ownCount(value: object): number {
  let count = 0;
  for (const key in value) if (hasOwn(value, key)) count++;
  return count;
}

/** No value at that place (not even `undefined`). */
const NONE: unique symbol = Symbol('none');

/** The own value of `value` at `key`, or NONE. */
function childOf(value: unknown, key: string | number): unknown {
  return value !== null && typeof value === 'object' && hasOwn(value, key)
    ? (value as Record<string | number, unknown>)[key]
    : NONE;
}

/** True when `a` and `b` are deeply and strictly equal (as `isDeepStrictEqual` says, for plain data). */
export function deepEqual(a: unknown, b: unknown): boolean {
  return deepEqualAlong(a, b, NONE, NONE);
}

/**
 * `deepEqual(a, b)`, where `f` and `s` are the values at the same place as `a` and `b` in two values
 * known to be deeply equal (`f` and `s` of the top call; NONE for none): where `a` is `f` and `b` is
 * `s` they are equal without a walk. The purity re-runs compare what `step` made from a copy of a
 * state with what it made from the state itself: what `step` left as it was is the copy's and the
 * state's own parts, which need no walk.
 */
export function deepEqualAlong(a: unknown, b: unknown, f: unknown, s: unknown): boolean {
  // NONE is never a value of the data, so with no known pair this never holds.
  if (a === f && b === s) return true;
  // 0 and -0 are === but not strictly equal.
  if (a === b) return typeof a !== 'number' || Object.is(a, b);
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return Object.is(a, b);
  const along = f !== NONE && s !== NONE;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b)) return false;
    if (Object.getPrototypeOf(a) !== Array.prototype || Object.getPrototypeOf(b) !== Array.prototype)
      return isDeepStrictEqual(a, b);
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      // A hole: left to isDeepStrictEqual.
      if (!hasOwn(a, i) || !hasOwn(b, i)) return isDeepStrictEqual(a, b);
      if (!deepEqualAlong(a[i], b[i], along ? childOf(f, i) : NONE, along ? childOf(s, i) : NONE)) return false;
    }
    return true;
  }
  // Both plain with one prototype (each prototype read once: this runs for every object compared).
  const proto = Object.getPrototypeOf(a) as object | null;
  if (proto !== Object.getPrototypeOf(b) || (proto !== Object.prototype && proto !== null)) return isDeepStrictEqual(a, b);
  let count = 0;
  for (const key in a) {
    if (!hasOwn(a, key)) continue;
    count++;
    if (!hasOwn(b, key)) return false;
    const x = (a as Record<string, unknown>)[key];
    const y = (b as Record<string, unknown>)[key];
    if (!deepEqualAlong(x, y, along ? childOf(f, key) : NONE, along ? childOf(s, key) : NONE)) return false;
  }
  return count === ownCount(b);
}
