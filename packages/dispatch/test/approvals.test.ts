// Approvals and grants: parked calls, recordDecision, executeApproved, remembered grants.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDispatcher, defineTool, type BeforeHook } from '../src/index.js';
import { call, setup } from './fixtures.js';

describe('grants', () => {
  it('a session grant allows every later call; grants() is plain JSON that restores a dispatcher', async () => {
    const { dispatcher, ctx } = setup({ permissions: { ask: ['shell', 'add'] } });
    expect((await dispatcher.dispatch([call('shell', { cmd: 'ls' })], ctx)).parked).toHaveLength(1);
    dispatcher.grant({ scope: 'session' });
    const { results, parked } = await dispatcher.dispatch([call('shell', { cmd: 'ls' }), call('add', { a: 1, b: 1 })], ctx);
    expect(parked).toEqual([]);
    expect(results.map((r) => r.output)).toEqual(['ran ls', 2]);
    const saved = JSON.parse(JSON.stringify(dispatcher.grants()));
    expect(saved).toEqual([{ scope: 'session' }]);
    const restored = setup({ permissions: { ask: ['shell'] }, grants: saved });
    expect((await restored.dispatcher.dispatch([call('shell', { cmd: 'ls' })], ctx)).parked).toEqual([]);
  });

  it('a tool grant allows only that tool; a repeated grant is kept once', async () => {
    const { dispatcher, ctx } = setup({ permissions: { ask: ['shell', 'add'] } });
    dispatcher.grant({ scope: 'tool', tool: 'shell' });
    dispatcher.grant({ scope: 'tool', tool: 'shell' });
    const { results, parked } = await dispatcher.dispatch([call('shell', { cmd: 'ls' }), call('add', { a: 1, b: 1 })], ctx);
    expect(results.map((r) => r.output)).toEqual(['ran ls']);
    expect(parked.map((p) => p.call.name)).toEqual(['add']);
    expect(dispatcher.grants()).toEqual([{ scope: 'tool', tool: 'shell' }]);
  });

  it('rejects a malformed grant with a sentence naming it', () => {
    const { dispatcher } = setup();
    expect(() => dispatcher.grant({ scope: 'everything' } as never)).toThrow(/^Grant \{"scope":"everything"\} is invalid/);
    expect(() => dispatcher.grant({ scope: 'tool', pattern: 'bad pattern!' })).toThrow(/Permission pattern 'bad pattern!'/);
  });
});

describe('recordDecision', () => {
  it('emits user_approved / user_rejected and remembers approve-and-remember decisions as grants', async () => {
    const { dispatcher, records, ctx } = setup({ permissions: { ask: ['shell'] } });
    const first = call('shell', { cmd: 'ls' });
    const second = call('shell', { cmd: 'rm x' });
    await dispatcher.dispatch([first, second], ctx);
    dispatcher.recordDecision(first, { type: 'approve', remember: 'tool' });
    dispatcher.recordDecision(second, { type: 'reject', reason: 'too risky' });
    expect(records.slice(2)).toEqual([
      { callId: first.id, tool: 'shell', decision: 'user_approved', source: 'user:remember_tool' },
      { callId: second.id, tool: 'shell', decision: 'user_rejected', source: 'user', reason: 'too risky' },
    ]);
    expect(dispatcher.grants()).toEqual([{ scope: 'tool', tool: 'shell' }]);
  });

  it('throws on a decision that is neither approve nor reject', () => {
    const { dispatcher } = setup();
    expect(() => dispatcher.recordDecision(call('shell', {}), { type: 'maybe' } as never)).toThrow(
      /needs \{ type: 'approve' \| 'reject' \}/,
    );
  });
});

describe('executeApproved', () => {
  it('runs approved calls without asking the policy again, in call order, with no decision records', async () => {
    let policyCalls = 0;
    const { dispatcher, records, ctx } = setup({
      permissions: { ask: ['shell'] },
      policy: () => {
        policyCalls++;
        return { kind: 'deny', reason: 'policy would deny' };
      },
    });
    const a = call('shell', { cmd: 'one' });
    const b = call('shell', { cmd: 'two' });
    const { parked } = await dispatcher.dispatch([a, b], ctx);
    expect(parked).toHaveLength(2);
    const recordsBefore = records.length;
    const results = await dispatcher.executeApproved(
      parked.map((p) => p.call),
      ctx,
    );
    expect(results.map((r) => [r.callId, r.output])).toEqual([
      [a.id, 'ran one'],
      [b.id, 'ran two'],
    ]);
    expect(policyCalls).toBe(0);
    expect(records).toHaveLength(recordsBefore);
  });

  it('still validates input, runs before-hooks (a rewrite applies, a throw denies) and counts the budget', async () => {
    const safe: BeforeHook = {
      name: 'safe',
      run: ({ input }) => {
        const cmd = (input as { cmd: string }).cmd;
        if (cmd === 'explode') throw new Error('hook failed');
        return { kind: 'rewrite', input: { cmd: `${cmd} --dry-run` } };
      },
    };
    const { dispatcher, ctx } = setup({ hooks: { before: [safe] }, budget: { maxCalls: 1 } });
    const results = await dispatcher.executeApproved(
      [
        call('shell', { cmd: 'deploy' }),
        call('shell', { cmd: 42 }),
        call('shell', { cmd: 'explode' }),
        call('shell', { cmd: 'again' }),
      ],
      ctx,
    );
    expect(results.map((r) => r.output)).toEqual([
      'ran deploy --dry-run',
      "Invalid input for 'shell':\n- cmd: Invalid input: expected string, received number\nFix the arguments and call 'shell' again.",
      "Call to 'shell' denied: before-hook 'safe' failed (hook failed). Do not retry it unchanged.",
      "Call to 'shell' not run: the tool-call budget is used up (budget.maxCalls = 1). Answer with what you have.",
    ]);
  });

  it('never throws, even for garbage', async () => {
    const { dispatcher, ctx } = setup();
    const results = await dispatcher.executeApproved([undefined, 5] as never, ctx);
    expect(results).toHaveLength(2);
    expect(results.every((r) => r.isError)).toBe(true);
  });
});

describe('loop-exempt tools and tool specs', () => {
  it('lists loop-exempt tools and the specs the model sees', () => {
    const status = defineTool({
      name: 'status',
      description: 'Polls a job.',
      input: z.object({ job: z.string() }),
      loopExempt: true,
      execute: () => 'running',
    });
    const { dispatcher } = setup({ tools: [status] });
    expect(dispatcher.loopExemptTools()).toEqual(['status']);
    expect(dispatcher.toolSpecs()).toEqual([
      {
        name: 'status',
        description: 'Polls a job.',
        inputSchema: {
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          type: 'object',
          properties: { job: { type: 'string' } },
          required: ['job'],
        },
      },
    ]);
    expect(dispatcher.toolSpecs()).toBe(dispatcher.toolSpecs());
  });
});

describe('onResult: each result as soon as it is known', () => {
  it('announces denials at once and tool results in completion order; returns them in call order', async () => {
    const wait = defineTool({
      name: 'wait',
      description: 'waits ms',
      input: z.object({ ms: z.number() }),
      execute: async ({ ms }) => {
        await new Promise((resolve) => setTimeout(resolve, ms));
        return ms;
      },
    });
    const dispatcher = createDispatcher({ tools: [wait] });
    const seen: string[] = [];
    const calls = [
      { id: 'slow', name: 'wait', input: { ms: 40 } },
      { id: 'bad', name: 'nope', input: {} },
      { id: 'fast', name: 'wait', input: { ms: 1 } },
    ];
    const { results } = await dispatcher.dispatch(calls, {
      turnId: 't',
      onResult: (r) => {
        seen.push(r.callId);
        throw new Error('observer bug');
      },
    });
    expect(seen).toEqual(['bad', 'fast', 'slow']);
    expect(results.map((r) => r.callId)).toEqual(['slow', 'bad', 'fast']);
  });
});
