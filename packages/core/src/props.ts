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
    // An own property even for `__proto__`: assigning it would set the prototype instead.
    if (value !== undefined) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out as { [K in keyof T]?: Exclude<T[K], undefined> };
}
