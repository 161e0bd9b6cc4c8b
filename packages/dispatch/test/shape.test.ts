// Output shaping helpers.
import { describe, expect, it } from 'vitest';
import { capOutput, MAX_DEPTH, toJsonValue } from '../src/internal.js';

describe('toJsonValue', () => {
  it('follows JSON.stringify for undefined and toJSON', () => {
    expect(toJsonValue(undefined)).toEqual({ ok: true, value: null });
    expect(toJsonValue([undefined, { a: undefined, b: 1 }])).toEqual({ ok: true, value: [null, { b: 1 }] });
  });

  it('keeps __proto__ keys as own data without touching Object.prototype', () => {
    const shaped = toJsonValue(JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": 1}}'));
    expect(shaped.ok).toBe(true);
    if (shaped.ok) expect(Object.keys(shaped.value as object)).toEqual(['__proto__', 'constructor']);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('accepts a shared (non-cyclic) reference and refuses nesting beyond MAX_DEPTH', () => {
    const shared = { x: 1 };
    expect(toJsonValue({ a: shared, b: shared })).toEqual({ ok: true, value: { a: { x: 1 }, b: { x: 1 } } });
    let deep: unknown = 1;
    for (let i = 0; i <= MAX_DEPTH; i++) deep = [deep];
    expect(toJsonValue(deep)).toEqual({ ok: false, problem: `nesting deeper than ${MAX_DEPTH} levels at $[0][0][0][0][0]…` });
  });

  it('reports a getter that throws instead of throwing', () => {
    const hostile = Object.defineProperty({}, 'x', {
      enumerable: true,
      get() {
        throw new Error('nope');
      },
    });
    expect(toJsonValue(hostile)).toEqual({ ok: false, problem: 'a value that threw while being read (nope)' });
  });
});

describe('capOutput', () => {
  it('leaves short outputs alone and never splits a surrogate pair', () => {
    expect(capOutput({ a: 1 }, 100)).toEqual({ a: 1 });
    expect(capOutput('ab😀cd', 3)).toBe('ab…[truncated 4 chars]');
  });
});
