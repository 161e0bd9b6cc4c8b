// The permission pipeline through a real dispatcher: the secure default, layered named sets,
// yolo, and a before-hook's pre-approval.
import { describe, expect, it } from 'vitest';
import { createDispatcher, type BeforeHook } from '../src/index.js';
import type { DecisionRecord } from '../src/internal.js';
import { call, echo, setup, shell } from './fixtures.js';

describe('the secure default', () => {
  it("asks for a tool that is not readOnly unless a rule allows it; a readOnly tool runs; 'allow' is an option", async () => {
    // `setup` allows by default for the other tests; this dispatcher has the library's own default.
    const records: DecisionRecord[] = [];
    const asks = {
      dispatcher: createDispatcher({ tools: [echo, shell], onDecision: (r) => records.push(r) }),
      ctx: { turnId: 't1' },
      records,
    };
    const { results, parked } = await asks.dispatcher.dispatch(
      [call('shell', { cmd: 'ls' }), call('echo', { text: 'hi' })],
      asks.ctx,
    );
    expect(parked.map((p) => p.call.name)).toEqual(['shell']);
    expect(results.map((r) => r.output)).toEqual(['hi']);
    expect(asks.records.map((r) => [r.decision, r.source])).toEqual([
      ['ask', 'default'],
      ['allow', 'readonly'],
    ]);
    const allowed = {
      dispatcher: createDispatcher({ tools: [shell], permissions: { allow: ['shell:cmd=ls'] } }),
      ctx: { turnId: 't1' },
    };
    expect((await allowed.dispatcher.dispatch([call('shell', { cmd: 'ls' })], allowed.ctx)).results[0]?.output).toBe('ran ls');
    const old = setup({ defaultDecision: 'allow' });
    expect((await old.dispatcher.dispatch([call('shell', { cmd: 'ls' })], old.ctx)).results[0]?.output).toBe('ran ls');
  });

  it('refuses a default that is neither ask nor allow', () => {
    expect(() => setup({ defaultDecision: 'maybe' as never })).toThrow("defaultDecision must be 'ask' or 'allow'");
  });
});

describe('layered, named permission sets', () => {
  const permissions = [
    { name: 'session', allow: ['shell:cmd=ls'] },
    { name: 'team', deny: ['shell'], ask: ['add'] },
  ];

  it('the first set with a matching rule decides, and the source names the set and the verdict', async () => {
    const { dispatcher, ctx, records } = setup({ defaultDecision: 'ask', permissions });
    const { results, parked } = await dispatcher.dispatch(
      [call('shell', { cmd: 'ls' }), call('shell', { cmd: 'rm x' }), call('add', { a: 1, b: 2 })],
      ctx,
    );
    expect(results.map((r) => r.output)).toEqual([
      'ran ls',
      expect.stringMatching(/denied by rule 'shell' of permission set 'team'/),
    ]);
    expect(parked.map((p) => p.call.name)).toEqual(['add']);
    expect(records.map((r) => r.source)).toEqual(['set:session:allow:shell:cmd=ls', 'set:team:deny:shell', 'set:team:ask:add']);
  });

  it('an approved call is stopped at execution time by a deny of the set that decides then', async () => {
    const { dispatcher, ctx } = setup({ permissions });
    const [result] = await dispatcher.executeApproved([call('shell', { cmd: 'rm x' })], ctx);
    expect(result?.output).toMatch(/permission set 'team'/);
  });

  it('names the bad set: a missing or repeated name, an unknown key', () => {
    expect(() => setup({ permissions: [{ deny: [] } as never] })).toThrow(/permissions\[0\]\.name must be/);
    expect(() => setup({ permissions: [{ name: 'a' }, { name: 'a' }] })).toThrow("permissions names the set 'a' twice");
    expect(() => setup({ permissions: [{ name: 'a', allows: [] } as never] })).toThrow("permissions[0] has unknown key 'allows'");
  });
});

describe('yolo', () => {
  it('turns every ask into an allow; deny rules and hooks still apply', async () => {
    const block: BeforeHook = {
      name: 'block',
      run: ({ input }) => ((input as { cmd?: string }).cmd === 'halt' ? { kind: 'halt', output: 'halted' } : undefined),
    };
    const { dispatcher, ctx, records } = setup({
      defaultDecision: 'ask',
      yolo: true,
      permissions: { deny: ['shell:cmd=rm*'], ask: ['add'] },
      hooks: { before: [block] },
    });
    const { results, parked } = await dispatcher.dispatch(
      [call('shell', { cmd: 'ls' }), call('add', { a: 1, b: 2 }), call('shell', { cmd: 'rm x' }), call('shell', { cmd: 'halt' })],
      ctx,
    );
    expect(parked).toEqual([]);
    expect(results.map((r) => r.output)).toEqual(['ran ls', 3, expect.stringMatching(/denied by rule/), 'halted']);
    expect(records.map((r) => r.source)).toEqual(['yolo', 'yolo', 'rule:deny:shell:cmd=rm*', 'hook:block']);
  });
});

describe('a before-hook pre-approves a call', () => {
  const ci: BeforeHook = {
    name: 'ci',
    run: ({ input }) => ((input as { cmd?: string }).cmd?.startsWith('git ') ? { kind: 'approve' } : undefined),
  };

  it('runs it without asking; deny rules and the policy still win', async () => {
    const { dispatcher, ctx, records } = setup({
      defaultDecision: 'ask',
      hooks: { before: [ci] },
      permissions: { deny: ['shell:cmd=git push*'] },
      policy: ({ input }) => ((input as { cmd: string }).cmd === 'git gc' ? { kind: 'deny', reason: 'not now' } : undefined),
    });
    const { results, parked } = await dispatcher.dispatch(
      [
        call('shell', { cmd: 'git status' }),
        call('shell', { cmd: 'git push' }),
        call('shell', { cmd: 'git gc' }),
        call('shell', { cmd: 'ls' }),
      ],
      ctx,
    );
    expect(results.map((r) => r.output)).toEqual([
      'ran git status',
      expect.stringMatching(/denied by rule/),
      expect.stringMatching(/not now/),
    ]);
    expect(parked.map((p) => p.call.input)).toEqual([{ cmd: 'ls' }]);
    expect(records.map((r) => r.source)).toEqual(['hook:ci:approved', 'rule:deny:shell:cmd=git push*', 'policy', 'default']);
  });
});
