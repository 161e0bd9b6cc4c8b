// JSON checks shared by event reading and state parsing.

/**
 * True when `value` is plain JSON: null, a boolean, a finite number, a string, an array or a
 * plain object of JSON values, with no cycles. Iterative, so 10,000-deep nesting is fine.
 */
export function isJsonValue(value: unknown): boolean {
  const stack: unknown[] = [value];
  const onPath = new Set<object>();
  const exits: Array<object | undefined> = [undefined];
  while (stack.length > 0) {
    const current = stack.pop();
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
    if (onPath.has(current)) return false;
    const proto = Object.getPrototypeOf(current);
    if (!Array.isArray(current) && proto !== Object.prototype && proto !== null) return false;
    onPath.add(current);
    // Leave this object's path once its children are done.
    stack.push(undefined);
    exits.push(current);
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) {
      if (child === undefined) return false;
      stack.push(child);
      exits.push(undefined);
    }
  }
  return true;
}
