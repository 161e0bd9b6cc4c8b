// Deep equality for what `step` takes and gives: plain objects, arrays and primitives, compared
// the way `isDeepStrictEqual` compares them (the same enumerable own keys, the same kinds,
// primitives by `Object.is`), without its general machinery. Anything else (a Map, a Date, a
// class instance, an array with holes) is left to `isDeepStrictEqual`. Not compared: symbol keys
// and keys of an array beyond its indices (nothing `step` makes has them; JSON drops them).
import { isDeepStrictEqual } from 'node:util';

const isPlain = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

function ownCount(value: object): number {
  let count = 0;
  for (const key in value) if (Object.hasOwn(value, key)) count++;
  return count;
}

/** True when `a` and `b` are deeply and strictly equal (as `isDeepStrictEqual` says, for plain data). */
export function deepEqual(a: unknown, b: unknown): boolean {
  // 0 and -0 are === but not strictly equal.
  if (a === b) return typeof a !== 'number' || Object.is(a, b);
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return Object.is(a, b);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b)) return false;
    if (Object.getPrototypeOf(a) !== Array.prototype || Object.getPrototypeOf(b) !== Array.prototype)
      return isDeepStrictEqual(a, b);
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      // A hole: left to isDeepStrictEqual.
      if (!Object.hasOwn(a, i) || !Object.hasOwn(b, i)) return isDeepStrictEqual(a, b);
      if (!deepEqual(a[i], b[i])) return false;
    }
    return true;
  }
  if (!isPlain(a) || !isPlain(b) || Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return isDeepStrictEqual(a, b);
  let count = 0;
  for (const key in a) {
    if (!Object.hasOwn(a, key)) continue;
    count++;
    if (!Object.hasOwn(b, key)) return false;
    if (!deepEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return count === ownCount(b);
}
