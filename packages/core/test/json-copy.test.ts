// Everything from a model becomes a plain JSON copy once, before anything reads it: a getter or a
// Proxy in a model's reply cannot show one value to the state and another to the dispatcher.
import { describe, expect, it } from 'vitest';
import { copyJson, step } from '@turnkit/core';
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
});
