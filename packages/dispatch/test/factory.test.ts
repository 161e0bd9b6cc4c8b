// dispatcherFactory: options checked once, a dispatcher per turn with its own grants and budget.
import { describe, expect, it } from 'vitest';
import { dispatcherFactory } from '../src/internal.js';
import { add, call, shell } from './fixtures.js';

const ctx = { turnId: 't1' };

describe('dispatcherFactory', () => {
  it('makes dispatchers that share the checked tool specs', () => {
    const make = dispatcherFactory({ tools: [shell, add] });
    const first = make();
    const second = make();
    expect(second).not.toBe(first);
    expect(second.toolSpecs()).toBe(first.toolSpecs());
    expect(first.toolSpecs().map((s) => s.name)).toEqual(['shell', 'add']);
  });

  it('gives each dispatcher its own grants and budget counts, starting from the options', async () => {
    const make = dispatcherFactory({
      tools: [shell, add],
      permissions: { ask: ['shell'] },
      defaultDecision: 'allow',
      budget: { maxCalls: 1 },
    });
    const first = make();
    first.grant({ scope: 'session' });
    const ran = await first.dispatch([call('shell', { cmd: 'ls' })], ctx);
    expect(ran.results.map((r) => r.output)).toEqual(['ran ls']);
    expect(first.budgetUsage()).toEqual({ total: 1, perTool: { shell: 1 } });

    const second = make();
    expect(second.grants()).toEqual([]);
    expect(second.budgetUsage()).toEqual({ total: 0, perTool: {} });
    const asked = await second.dispatch([call('shell', { cmd: 'ls' })], ctx);
    expect(asked.parked.map((p) => p.call.name)).toEqual(['shell']);
    expect((await second.dispatch([call('add', { a: 1, b: 2 })], ctx)).results.map((r) => r.output)).toEqual([3]);
  });

  it('throws at once, as createDispatcher does, on bad options', () => {
    expect(() => dispatcherFactory({ tools: [add, add] })).toThrow(/createDispatcher: /);
    expect(() => dispatcherFactory({ tools: [add], permissions: { deny: [42 as never] } })).toThrow(TypeError);
  });
});
