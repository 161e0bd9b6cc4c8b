// Everything from a model becomes a plain JSON copy once, before anything reads it: a getter or a
// Proxy in a model's reply cannot show one value to the state and another to the dispatcher.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { copyJson } from '../src/json.ts';
import { step } from '@turnkit/core';
import { callingModel } from './helpers.js';

describe('a model reply is copied once into plain JSON', () => {
  it('a tool input with a getter is read once; the state, the transcript and dispatch_tools share the copy', () => {
    let reads = 0;
    const input = {
      get cmd() {
        reads++;
        return reads === 1 ? 'ls' : 'rm -rf /';
      },
    };
    const [next, effects] = step(callingModel(), {
      type: 'model_responded',
      response: { text: '', toolCalls: [{ id: 'c1', name: 'shell', input }] },
    });
    expect(reads).toBe(1);
    const dispatched = effects.find((e) => e.type === 'dispatch_tools');
    expect(dispatched).toEqual({ type: 'dispatch_tools', calls: [{ id: 'c1', name: 'shell', input: { cmd: 'ls' } }] });
    expect(next.batch?.calls[0]?.input).toEqual({ cmd: 'ls' });
    expect(Object.getOwnPropertyDescriptor(next.batch?.calls[0]?.input, 'cmd')).toMatchObject({ value: 'ls', writable: true });
    expect(reads).toBe(1);
  });

  it('a Proxy input is read through its traps once, into a plain object', () => {
    let gets = 0;
    const proxy = new Proxy({ q: 'milk' }, { get: (t, k) => (gets++, Reflect.get(t, k)) });
    const copy = copyJson({ input: proxy });
    expect(copy).toEqual({ input: { q: 'milk' } });
    expect(gets).toBe(1);
  });

  it('keeps __proto__ as an own key and refuses what is not JSON', () => {
    const copy = copyJson(JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    expect(Object.hasOwn(copy, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    for (const bad of [() => 1, Number.NaN, new Date(), { a: undefined }, 1n]) expect(copyJson(bad)).toBeUndefined();
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(copyJson(cycle)).toBeUndefined();
  });

  it('copies any JSON value to an equal plain value that shares no object with it (numRuns 300)', () => {
    const objects = (value: unknown, out: object[] = []): object[] => {
      if (value !== null && typeof value === 'object') {
        out.push(value);
        for (const inner of Object.values(value)) objects(inner, out);
      }
      return out;
    };
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const copy = copyJson(value);
        expect(JSON.stringify(copy)).toBe(JSON.stringify(value));
        const originals = new Set(objects(value));
        for (const made of objects(copy)) {
          expect(originals.has(made)).toBe(false);
          expect([Object.prototype, Array.prototype]).toContain(Object.getPrototypeOf(made));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a cycle at any depth, and nesting past 2000 levels, but copies 2000 levels', () => {
    const nested = (levels: number, inner: unknown): unknown => {
      let value = inner;
      for (let i = 0; i < levels; i++) value = { next: value };
      return value;
    };
    for (const depth of [0, 1, 31, 32, 33, 100]) {
      const loop: Record<string, unknown> = {};
      loop.back = nested(depth, loop);
      expect(copyJson({ deep: nested(depth, loop) })).toBeUndefined();
      expect(copyJson([nested(depth, [loop])])).toBeUndefined();
    }
    expect(JSON.stringify(copyJson(nested(1999, 1)))).toBe(JSON.stringify(nested(1999, 1)));
    expect(copyJson(nested(2000, {}))).toBeUndefined();
  });

  it('keeps a shared object that is no cycle (the same object twice side by side)', () => {
    const shared = { a: 1 };
    const copy = copyJson({ x: shared, y: [shared, shared] }) as { x: object; y: object[] };
    expect(copy).toEqual({ x: { a: 1 }, y: [{ a: 1 }, { a: 1 }] });
    expect(copy.x).not.toBe(shared);
  });
});
