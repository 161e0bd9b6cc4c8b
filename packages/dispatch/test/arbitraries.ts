// Hostile inputs for the property tests. The giant values are built once and drawn rarely, so
// the properties cover them without spending the run on copying 10 MB strings.
import fc from 'fast-check';

export const TEN_MB = 'x'.repeat(10 * 1024 * 1024);

function nest(depth: number, wrap: (inner: unknown) => unknown): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = wrap(value);
  return value;
}

export const DEEP_OBJECT = nest(10_000, (inner) => ({ a: inner }));
export const DEEP_ARRAY = nest(10_000, (inner) => [inner]);

/** Objects with keys that pollute a careless merge, parsed so `__proto__` is an own key. */
const protoKeys = fc.constantFrom(
  JSON.parse('{"__proto__": {"polluted": "yes"}}'),
  JSON.parse('{"constructor": {"prototype": {"polluted": "yes"}}}'),
  JSON.parse('{"text": "hi", "__proto__": {"polluted": "yes"}, "mode": 1}'),
  JSON.parse('{"x": {"__proto__": {"polluted": "yes"}}}'),
  JSON.parse('{"__proto__": null}'),
);

const GIANTS: Record<string, unknown> = {
  TEN_MB,
  DEEP_OBJECT,
  DEEP_ARRAY,
  TEXT_TEN_MB: { text: TEN_MB },
  X_DEEP: { x: DEEP_OBJECT },
  X_TEN_MB: { x: TEN_MB },
};

/** A stand-in for a giant value, so a failing run prints `<TEN_MB>` instead of 10 MB of text. */
export class Giant {
  constructor(readonly which: string) {}
  [fc.toStringMethod](): string {
    return `<${this.which}>`;
  }
}

/** Replaces a top-level Giant stand-in by its value. */
export function materialize(value: unknown): unknown {
  return value instanceof Giant ? GIANTS[value.which] : value;
}

const giant = fc.constantFrom(...Object.keys(GIANTS)).map((which) => new Giant(which));

/** Any input a model (or a broken adapter) might send. */
export const hostileInput: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 12 },
  { arbitrary: fc.record({ text: fc.string() }), weight: 6 },
  { arbitrary: fc.record({ mode: fc.integer({ min: -1, max: 12 }) }), weight: 10 },
  { arbitrary: fc.record({ x: fc.oneof(fc.string(), fc.constantFrom('evil', 'EVIL plan')) }), weight: 4 },
  { arbitrary: protoKeys, weight: 4 },
  { arbitrary: giant, weight: 1 },
);

export const toolNames = ['echo', 'chaos', 'mirror', 'record'] as const;

export const hostileName: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...toolNames), weight: 8 },
  { arbitrary: fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype', 'ECHO', ''), weight: 2 },
  { arbitrary: fc.string({ maxLength: 80 }), weight: 2 },
  { arbitrary: fc.constant(new Giant('TEN_MB')), weight: 1 },
) as fc.Arbitrary<string>;

/** Calls a tool would accept, so the execute, after-hook and shaping stages see hostile values too. */
const wellFormedCall: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({ name: fc.constant('echo'), input: fc.record({ text: fc.oneof(fc.string(), fc.constant(new Giant('TEN_MB'))) }) }),
  fc.record({ name: fc.constant('chaos'), input: fc.record({ mode: fc.integer({ min: 0, max: 12 }) }) }),
  fc.record({ name: fc.constant('mirror'), input: hostileInput }),
  fc.record({
    name: fc.constant('record'),
    input: fc.oneof(protoKeys, fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }))),
  }),
);

/** A call-shaped entry, or garbage where a call should be. `id` is filled in by the test. */
export const hostileCall: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: wellFormedCall, weight: 30 },
  {
    arbitrary: fc.record(
      { name: hostileName, input: hostileInput, inputError: fc.string({ maxLength: 40 }) },
      { requiredKeys: ['name', 'input'] },
    ),
    weight: 30,
  },
  { arbitrary: fc.constantFrom<unknown>(null, 42, 'call', [], { name: 5 }, { input: {} }), weight: 1 },
);
