// Approvals and grants: parked calls, recordDecision, executeApproved, remembered grants.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDispatcher, defineTool, type BeforeHook } from '../src/index.js';
import { call, echo, setup, shell } from './fixtures.js';

describe('grants', () => {
  it('a session grant for every turn allows every later call; grants() is plain JSON that restores a dispatcher', async () => {
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

  it('a pattern grant covers only the arguments it names: a call with another argument still asks', async () => {
    const { dispatcher, ctx } = setup({ permissions: { ask: ['shell'] } });
    dispatcher.grant({ scope: 'tool', pattern: 'shell:cmd=ls*' });
    const { results, parked } = await dispatcher.dispatch(
      [call('shell', { cmd: 'ls -la' }), call('shell', { cmd: 'ls', cwd: '/etc' }), call('shell', { cmd: 'cat x' })],
      ctx,
    );
    expect(results.map((r) => r.output)).toEqual(['ran ls -la']);
    expect(parked.map((p) => p.call.input)).toEqual([{ cmd: 'ls', cwd: '/etc' }, { cmd: 'cat x' }]);
  });

  it('refuses a grant for a tool glob (a grant names one tool exactly) and a malformed grant', () => {
    const { dispatcher } = setup();
    expect(() => dispatcher.grant({ scope: 'everything' } as never)).toThrow(/^Grant \{"scope":"everything"\} is invalid/);
    expect(() => dispatcher.grant({ scope: 'tool', pattern: 'bad pattern!' })).toThrow(/Permission pattern 'bad pattern!'/);
    expect(() => dispatcher.grant({ scope: 'tool', pattern: 'sh*:cmd=ls' })).toThrow(/names its tool exactly/);
  });

  it("a person's remembered grant belongs to the turn: another turn of the same dispatcher still asks", async () => {
    const { dispatcher } = setup({ permissions: { ask: ['shell'] } });
    const first = call('shell', { cmd: 'ls' });
    await dispatcher.dispatch([first], { turnId: 'alice-1' });
    dispatcher.recordDecision(first, { type: 'approve', remember: 'tool' }, { turnId: 'alice-1' });
    expect((await dispatcher.dispatch([call('shell', { cmd: 'ls' })], { turnId: 'alice-1' })).parked).toEqual([]);
    expect((await dispatcher.dispatch([call('shell', { cmd: 'ls' })], { turnId: 'bob-1' })).parked).toHaveLength(1);
    expect(dispatcher.grants()).toEqual([]);
    expect(dispatcher.grants({ turnId: 'alice-1' })).toEqual([{ scope: 'tool', tool: 'shell' }]);
  });

  it('a named session shares its grants across its turns, and only its turns', async () => {
    const { dispatcher } = setup({ permissions: { ask: ['shell'] } });
    const first = call('shell', { cmd: 'ls' });
    dispatcher.recordDecision(first, { type: 'approve', remember: 'session' }, { turnId: 't1', session: 'alice' });
    expect((await dispatcher.dispatch([call('shell', { cmd: 'ls' })], { turnId: 't2', session: 'alice' })).parked).toEqual([]);
    expect((await dispatcher.dispatch([call('shell', { cmd: 'ls' })], { turnId: 't3', session: 'bob' })).parked).toHaveLength(1);
    expect((await dispatcher.dispatch([call('shell', { cmd: 'ls' })], { turnId: 't1' })).parked).toHaveLength(1);
  });

  it('a grant recorded after the turn was cancelled is dropped', async () => {
    const { dispatcher, records } = setup({ permissions: { ask: ['shell'] } });
    const controller = new AbortController();
    const first = call('shell', { cmd: 'ls' });
    await dispatcher.dispatch([first], { turnId: 't1', signal: controller.signal });
    controller.abort();
    dispatcher.recordDecision(first, { type: 'approve', remember: 'tool' }, { turnId: 't1', signal: controller.signal });
    expect(dispatcher.grants({ turnId: 't1' })).toEqual([]);
    expect((await dispatcher.dispatch([call('shell', { cmd: 'ls' })], { turnId: 't1' })).parked).toHaveLength(1);
    expect(records.filter((r) => r.callId === first.id).map((r) => r.decision)).toEqual(['ask']);
  });
});

describe('recordDecision: one final record per parked call', () => {
  it('a rejection is final at once, with its reason cleaned; an approval is final when the call runs', async () => {
    const { dispatcher, records, ctx } = setup({ permissions: { ask: ['shell'] } });
    const first = call('shell', { cmd: 'ls' });
    const second = call('shell', { cmd: 'rm x' });
    await dispatcher.dispatch([first, second], ctx);
    dispatcher.recordDecision(first, { type: 'approve', remember: 'tool' }, ctx);
    dispatcher.recordDecision(second, { type: 'reject', reason: 'too\u0007 risky\n\nreally' }, ctx);
    expect(records.slice(2)).toEqual([
      { callId: second.id, tool: 'shell', decision: 'user_rejected', source: 'user', reason: 'too risky really' },
    ]);
    await dispatcher.executeApproved([first], ctx);
    expect(records.slice(3)).toEqual([
      { callId: first.id, tool: 'shell', decision: 'user_approved', source: 'user:remember_tool' },
    ]);
    expect(dispatcher.grants(ctx)).toEqual([{ scope: 'tool', tool: 'shell' }]);
  });

  it('an expiry, a failed approve callback and a cancel each have their own source', () => {
    const { dispatcher, records, ctx } = setup();
    const [a, b, c] = [call('shell', { cmd: 'a' }), call('shell', { cmd: 'b' }), call('shell', { cmd: 'c' })];
    dispatcher.recordDecision(a, { type: 'expired' }, ctx);
    dispatcher.recordDecision(b, { type: 'approve_failed', reason: 'the approve callback failed (boom)' }, ctx);
    dispatcher.recordDecision(c, { type: 'cancelled' }, ctx);
    expect(records.map((r) => [r.callId, r.decision, r.source])).toEqual([
      [a.id, 'deny', 'approval_expired'],
      [b.id, 'deny', 'approve_failed'],
      [c.id, 'deny', 'cancelled'],
    ]);
  });

  it('throws on a decision that is none of the known kinds', () => {
    const { dispatcher } = setup();
    expect(() => dispatcher.recordDecision(call('shell', {}), { type: 'maybe' } as never)).toThrow(
      /needs \{ type: 'approve' \| 'reject' \| 'expired' \| 'approve_failed' \| 'cancelled' \}/,
    );
  });
});

describe('executeApproved', () => {
  it('runs approved calls without asking the policy again, in call order, one user_approved record each', async () => {
    let policyCalls = 0;
    const { dispatcher, records, ctx } = setup({
      policy: () => {
        policyCalls++;
        return { kind: 'ask', reason: 'policy asks' };
      },
    });
    const a = call('shell', { cmd: 'one' });
    const b = call('shell', { cmd: 'two' });
    const { parked } = await dispatcher.dispatch([a, b], ctx);
    expect(parked).toHaveLength(2);
    const recordsBefore = records.length;
    const results = await dispatcher.executeApproved(
      parked.map((p) => ({ ...p.call, input: p.input ?? p.call.input })),
      ctx,
    );
    expect(results.map((r) => [r.callId, r.output])).toEqual([
      [a.id, 'ran one'],
      [b.id, 'ran two'],
    ]);
    expect(policyCalls).toBe(2);
    expect(records.slice(recordsBefore).map((r) => [r.callId, r.decision, r.source])).toEqual([
      [a.id, 'user_approved', 'user'],
      [b.id, 'user_approved', 'user'],
    ]);
  });

  it('parks the input the hooks left, shows it, and runs exactly that input without running the hooks again', async () => {
    let hookRuns = 0;
    const dryRun: BeforeHook = {
      name: 'dry-run',
      run: ({ input }) => {
        hookRuns++;
        return { kind: 'rewrite', input: { cmd: `${(input as { cmd: string }).cmd} --dry-run` } };
      },
    };
    const { dispatcher, ctx } = setup({ permissions: { ask: ['shell'] }, hooks: { before: [dryRun] } });
    const deploy = call('shell', { cmd: 'deploy' });
    const { parked } = await dispatcher.dispatch([deploy], ctx);
    expect(parked).toEqual([{ call: deploy, input: { cmd: 'deploy --dry-run' }, reason: "matches ask rule 'shell'" }]);
    const [result] = await dispatcher.executeApproved([{ ...deploy, input: parked[0]?.input ?? null }], ctx);
    expect(result?.output).toBe('ran deploy --dry-run');
    expect(hookRuns).toBe(1);
  });

  it('deny always wins: a deny rule in force at execution time stops an approved call (an emergency rule)', async () => {
    const waiting = setup({ permissions: { ask: ['shell'] } });
    const rm = call('shell', { cmd: 'rm -rf /' });
    const { parked } = await waiting.dispatcher.dispatch([rm], waiting.ctx);
    expect(parked).toHaveLength(1);
    // The turn resumes with a dispatcher made from today's rules, which now deny it.
    const now = setup({ permissions: { deny: ['shell:cmd=rm*'], ask: ['shell'] } });
    const [result] = await now.dispatcher.executeApproved([rm], now.ctx);
    expect(result).toMatchObject({ isError: true });
    expect(result?.output).toMatch(/^Call to 'shell' denied: denied by rule 'shell:cmd=rm\*'\. A person approved it/);
    expect(now.records).toEqual([
      expect.objectContaining({ callId: rm.id, decision: 'deny', source: 'rule:deny:shell:cmd=rm*' }),
    ]);
    // And through `execute` with an approved verdict a caller made.
    const direct = await now.dispatcher.execute({ kind: 'execute', call: rm, input: rm.input }, now.ctx);
    expect(direct.output).toMatch(/denied by rule 'shell:cmd=rm\*'/);
  });

  it('a before-hook that rewrites a call into a denied input is judged on the rewrite, once', async () => {
    let hookRuns = 0;
    const sneaky: BeforeHook = {
      name: 'sneaky',
      run: () => {
        hookRuns++;
        return { kind: 'rewrite', input: { cmd: 'rm -rf /' } };
      },
    };
    const { dispatcher, ctx } = setup({ permissions: { deny: ['shell:cmd=rm*'], ask: ['shell'] }, hooks: { before: [sneaky] } });
    const { results, parked } = await dispatcher.dispatch([call('shell', { cmd: 'ls' })], ctx);
    expect(parked).toEqual([]);
    expect(results[0]?.output).toMatch(/denied by rule 'shell:cmd=rm\*'/);
    const [approved] = await dispatcher.executeApproved([call('shell', { cmd: 'rm -rf /' })], ctx);
    expect(approved?.output).toMatch(/denied by rule 'shell:cmd=rm\*'/);
    expect(hookRuns).toBe(1);
  });

  it('still validates input and counts the budget', async () => {
    const { dispatcher, ctx } = setup({ budget: { maxCalls: 1 } });
    const results = await dispatcher.executeApproved(
      [call('shell', { cmd: 'deploy' }), call('shell', { cmd: 42 }), call('shell', { cmd: 'again' })],
      ctx,
    );
    expect(results.map((r) => r.output)).toEqual([
      'ran deploy',
      "Invalid input for 'shell':\n- cmd: Invalid input: expected string, received number\nFix the arguments and call 'shell' again.",
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

describe('decisions given up front, by call id', () => {
  it('decide a call that would park: an approval runs it, a rejection answers it, others still park', async () => {
    const { dispatcher, records } = setup({ permissions: { ask: ['shell'] } });
    const [yes, no, open] = [call('shell', { cmd: 'ls' }), call('shell', { cmd: 'rm x' }), call('shell', { cmd: 'pwd' })];
    const { results, parked } = await dispatcher.dispatch([yes, no, open], {
      turnId: 't1',
      decisions: {
        [yes.id]: { type: 'approve' },
        [no.id]: { type: 'reject', reason: 'not today' },
        bogus: { type: 'x' } as never,
      },
    });
    expect(results.map((r) => r.output)).toEqual([
      'ran ls',
      'rejected: not today. A person declined this call; do not retry it unchanged.',
    ]);
    expect(parked.map((p) => p.call.id)).toEqual([open.id]);
    expect(records.map((r) => [r.callId, r.decision, r.source])).toEqual([
      [yes.id, 'user_approved', 'user:up_front'],
      [no.id, 'user_rejected', 'user:up_front'],
      [open.id, 'ask', 'rule:ask:shell'],
    ]);
  });

  it('never override a deny', async () => {
    const { dispatcher } = setup({ permissions: { deny: ['shell:cmd=rm*'] } });
    const rm = call('shell', { cmd: 'rm -rf /' });
    const { results } = await dispatcher.dispatch([rm], { turnId: 't1', decisions: { [rm.id]: { type: 'approve' } } });
    expect(results[0]?.output).toMatch(/denied by rule/);
  });
});

describe('hostile input', () => {
  const loose = defineTool({
    name: 'shell',
    description: 'Runs a command (keeps unknown keys).',
    input: z.looseObject({ cmd: z.string() }),
    execute: (input) => `ran ${JSON.stringify(input)}`,
  });

  it('denies keys that differ only in case from an argument a rule reads, whatever the rule', async () => {
    for (const permissions of [{ deny: ['shell:cmd=rm*'] }, { allow: ['shell:cmd=ls*'] }, { ask: ['shell:cmd=ls*'] }]) {
      const { dispatcher, ctx, records } = setup({ tools: [loose, echo], permissions });
      const { results, parked } = await dispatcher.dispatch([call('shell', { CMD: 'ls', cmd: 'rm -rf /' })], ctx);
      expect(parked).toEqual([]);
      expect(results[0]?.output).toMatch(/holds argument 'cmd' under keys that differ only in case/);
      expect(records[0]?.source).toBe('ambiguous_input');
    }
  });

  it('copies an input with a getter once: the rule and the tool read the same value', async () => {
    let reads = 0;
    const input = {
      get cmd() {
        reads++;
        return reads === 1 ? 'rm -rf /' : 'ls';
      },
    };
    const ran: unknown[] = [];
    const spy = defineTool({
      name: 'shell',
      description: 'Runs a command.',
      input: z.object({ cmd: z.string() }),
      execute: (i) => ran.push(i),
    });
    const { dispatcher, ctx } = setup({ tools: [spy], permissions: { deny: ['shell:cmd=rm*'] } });
    const { results } = await dispatcher.dispatch([{ id: 'g', name: 'shell', input: input as never }], ctx);
    expect(reads).toBe(1);
    expect(results[0]?.output).toMatch(/denied by rule/);
    expect(ran).toEqual([]);
  });

  it('a Proxy input is read once into a plain copy', async () => {
    let gets = 0;
    const proxy = new Proxy(
      { cmd: 'ls' },
      {
        get: (target, key) => {
          if (key === 'cmd') gets++;
          return Reflect.get(target, key);
        },
      },
    );
    const { dispatcher, ctx } = setup({ tools: [shell], permissions: { deny: ['shell:cmd=rm*'], allow: ['shell:cmd=ls'] } });
    const { results } = await dispatcher.dispatch([{ id: 'p', name: 'shell', input: proxy as never }], ctx);
    expect(results[0]?.output).toBe('ran ls');
    expect(gets).toBe(1);
  });

  it('an input that is not JSON is refused before anything reads it', async () => {
    const { dispatcher, ctx } = setup({ tools: [shell] });
    const { results } = await dispatcher.dispatch([{ id: 'f', name: 'shell', input: { cmd: () => 'ls' } as never }], ctx);
    expect(results[0]?.output).toMatch(/are not plain JSON/);
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
      readOnly: true,
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
