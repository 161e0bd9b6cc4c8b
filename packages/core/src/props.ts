/**
 * The given properties without those whose value is `undefined`: how optional properties are passed
 * on under `exactOptionalPropertyTypes`, where `{ x: undefined }` is not a valid `{ x?: X }`.
 *
 * `{ ...definedProps({ limits, system }) }` has `limits` only when it is defined.
 */
export function definedProps<T extends Record<string, unknown>>(props: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  // Object.fromEntries defines own properties: a `__proto__` key stays a key (an assignment would set the prototype).
  return Object.fromEntries(Object.entries(props).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}
