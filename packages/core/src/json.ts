// JSON checks shared by event reading and state parsing.

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
