// JSON checks and copies shared by event reading and state parsing.
import type { JsonValue } from './types.js';

/**
 * True when `value` is plain JSON: null, a boolean, a finite number, a string, an array or a plain
 * object of JSON values, with no cycles, at most MAX_JSON_DEPTH levels deep. Shallow values (the
 * common case) are checked by a quick recursive walk; anything deeper than 64 levels, or cyclic,
 * by the iterative walk below.
 */
export function isJsonValue(value: unknown): boolean {
  const quick = quickCheck(value, 0);
  return quick === 'deep' ? isJsonValueDeep(value) : quick;
}

function quickCheck(value: unknown, depth: number): boolean | 'deep' {
  if (value === null) return true;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (depth >= 64) return 'deep';
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const r = quickCheck(value[i], depth + 1);
          if (r !== true) return r;
        }
        return true;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return false;
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue;
        const r = quickCheck((value as Record<string, unknown>)[key], depth + 1);
        if (r !== true) return r;
      }
      return true;
    }
    default:
      return false;
  }
}

/**
 * The deepest nesting a JSON value in a turn may have. Deeper values are refused where they enter
 * (an event), so everything that walks a value later (signatures, JSON round trips) stays well
 * inside the call stack. @turnkit/dispatch caps tool outputs lower (1000), so no real result hits it.
 */
export const MAX_JSON_DEPTH = 2000;

/**
 * The iterative walk: plain JSON, no cycles, at most MAX_JSON_DEPTH levels deep. The same test
 * as isJsonValue, for values the quick walk could not settle.
 */
function isJsonValueDeep(value: unknown): boolean {
  const stack: Array<{ readonly value: unknown; readonly depth: number }> = [{ value, depth: 0 }];
  const onPath = new Set<object>();
  const exits: Array<object | undefined> = [undefined];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop() as { value: unknown; depth: number };
    const exit = exits.pop();
    if (exit !== undefined) {
      onPath.delete(exit);
      continue;
    }
    if (current === null || typeof current === 'string' || typeof current === 'boolean') continue;
    if (typeof current === 'number') {
      if (!Number.isFinite(current)) return false;
      continue;
    }
    if (typeof current !== 'object') return false;
    if (depth >= MAX_JSON_DEPTH) return false;
    if (onPath.has(current)) return false;
    const proto = Object.getPrototypeOf(current);
    if (!Array.isArray(current) && proto !== Object.prototype && proto !== null) return false;
    onPath.add(current);
    // Leave this object's path once its children are done.
    stack.push({ value: undefined, depth });
    exits.push(current);
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) {
      if (child === undefined) return false;
      stack.push({ value: child, depth: depth + 1 });
      exits.push(undefined);
    }
  }
  return true;
}

/**
 * A plain JSON copy of `value`, read once: every property is read exactly one time (a getter runs
 * once, a Proxy's traps run once per key), and the copy holds only plain objects, arrays and
 * primitives, with own keys (`__proto__` included). Whatever reads the copy afterwards sees one
 * value, never one that changes between reads. `undefined` when `value` is not JSON (a function,
 * a non-finite number, a class instance, a cycle, nesting past MAX_JSON_DEPTH) or a read threw
 * (a cyclic value may be read more than once before it is refused).
 *
 * @example
 * copyJson({ get cmd() { return 'ls'; } }); // { cmd: 'ls' }, a plain data property
 */
export function copyJson(value: unknown): JsonValue | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  try {
    return copyValue(value, 0, undefined);
  } catch {
    return undefined;
  }
}

/** Thrown (one instance, no stack trace to capture) when a value is not JSON; copyJson answers undefined. */
class NotJson {}
const NOT_JSON = new NotJson();

/**
 * Above this depth the objects on the path are kept in a set to catch a cycle at once; below it a
 * cycle is caught by its depth (it nests without end), so a shallow value, the common case, makes
 * no set.
 */
const TRACKED_FROM_DEPTH = 32;

function copyValue(value: unknown, depth: number, onPath: Set<object> | undefined): JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw NOT_JSON;
    return value;
  }
  if (typeof value !== 'object' || depth >= MAX_JSON_DEPTH) throw NOT_JSON;
  if (depth < TRACKED_FROM_DEPTH) return copyObject(value, depth, undefined);
  const path = onPath ?? new Set<object>();
  if (path.has(value)) throw NOT_JSON;
  path.add(value);
  try {
    return copyObject(value, depth, path);
  } finally {
    path.delete(value);
  }
}

function copyObject(value: object, depth: number, onPath: Set<object> | undefined): JsonValue {
  if (Array.isArray(value)) {
    const length = value.length;
    // Made at its final length: an array grown by push keeps spare room, and turns keep these copies.
    const out = new Array<JsonValue>(length);
    for (let i = 0; i < length; i++) out[i] = copyValue(value[i], depth + 1, onPath);
    return out;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw NOT_JSON;
  const out: Record<string, JsonValue> = {};
  for (const key of Object.keys(value)) {
    const item = copyValue((value as Record<string, unknown>)[key], depth + 1, onPath);
    // Assigning `__proto__` would set the copy's prototype: it becomes an own key like any other.
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
    else out[key] = item;
  }
  return out;
}
