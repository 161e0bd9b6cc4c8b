/**
 * The given properties without those whose value is `undefined`: how optional properties are passed
 * on under `exactOptionalPropertyTypes`, where `{ x: undefined }` is not a valid `{ x?: X }`.
 *
 * `{ ...definedProps({ limits, system }) }` has `limits` only when it is defined.
 */
export function definedProps<T extends Record<string, unknown>>(props: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(props)) {
    const value = props[key];
    if (value === undefined) continue;
    // A key named `__proto__` is a property, not the prototype: defined, not assigned.
    if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    else out[key] = value;
  }
  return out as { [K in keyof T]?: Exclude<T[K], undefined> };
}
