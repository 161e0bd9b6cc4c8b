// Audit records (onRecord), the caller's context and the transcript that hooks and policies see.
import type { CallRecord, Message } from '@turnkit/core';
import { describe, expect, it } from 'vitest';
import { createDispatcher, type CallInfo } from '../src/index.js';
import { add, call, echo, shell } from './fixtures.js';

describe('onRecord', () => {
  it('gets one record per call with a result: the input that ran, decision, source, outcome, time and tries', async () => {
    const records: CallRecord[] = [];
    const dispatcher = createDispatcher({
      defaultDecision: 'allow',
      tools: [echo, shell, add],
      permissions: { deny: ['shell:cmd=rm*'], ask: ['shell:cmd=deploy*'] },
      budget: { perTool: { add: 1 } },
      hooks: {
        before: [
          {
            name: 'shout',
            run: ({ call: c, input }) =>
              c.name === 'echo' ? { kind: 'rewrite', input: { text: `${(input as { text: string }).text}!` } } : undefined,
          },
          {
            name: 'no-secrets',
            run: ({ input }) =>
              JSON.stringify(input).includes('secret') ? { kind: 'halt', output: 'Blocked: secrets stay here.' } : undefined,
          },
        ],
      },
      onRecord: (r) => records.push(r),
    });
    const calls = [
      call('echo', { text: 'hi' }),
      call('shell', { cmd: 'rm -rf /' }),
      call('shell', { cmd: 'deploy api' }),
      call('add', { a: 1, b: 2 }),
      call('add', { a: 3, b: 4 }),
      call('echo', { text: 'the secret' }),
      call('nope', { x: 1 }),
    ];
    const { results, parked } = await dispatcher.dispatch(calls, { turnId: 'turn-1' });
    expect(parked.map((p) => p.call.id)).toEqual([calls[2]?.id]);
    const byId = new Map(records.map((r) => [r.callId, r]));
    expect(records).toHaveLength(results.length);
    expect(byId.get(calls[0]?.id ?? '')).toEqual({
      turnId: 'turn-1',
      callId: calls[0]?.id,
      tool: 'echo',
      input: { text: 'hi!' },
      decision: 'allow',
      source: 'readonly',
      outcome: 'ok',
      durationMs: expect.any(Number),
      attempts: 1,
    });
    expect(byId.get(calls[1]?.id ?? '')).toEqual({
      turnId: 'turn-1',
      callId: calls[1]?.id,
      tool: 'shell',
      input: { cmd: 'rm -rf /' },
      decision: 'deny',
      source: 'rule:deny:shell:cmd=rm*',
      outcome: 'denied',
      durationMs: 0,
      attempts: 0,
      reason: "Call to 'shell' denied: denied by rule 'shell:cmd=rm*'. Do not retry it unchanged; continue without it.",
    });
    expect([3, 4, 5, 6].map((i) => byId.get(calls[i]?.id ?? ''))).toMatchObject([
      { decision: 'allow', source: 'default', outcome: 'ok', attempts: 1 },
      { decision: 'deny', source: 'budget:perTool:add', outcome: 'budget', attempts: 0 },
      {
        decision: 'deny',
        source: 'hook:no-secrets',
        outcome: 'denied',
        reason: 'Blocked: secrets stay here.',
        input: { text: 'the secret' },
      },
      { decision: 'deny', source: 'unknown_tool', outcome: 'unknown_tool', input: { x: 1 } },
    ]);
  });

  it('records approved calls as user_approved, and reaches the caller through the context too', async () => {
    const fromDispatcher: CallRecord[] = [];
    const fromCaller: CallRecord[] = [];
    const dispatcher = createDispatcher({ defaultDecision: 'allow', tools: [shell], onRecord: (r) => fromDispatcher.push(r) });
    const c = call('shell', { cmd: 'deploy api' });
    await dispatcher.executeApproved([c], { turnId: 't', onRecord: (r) => fromCaller.push(r) });
    expect(fromCaller).toEqual(fromDispatcher);
    expect(fromCaller).toMatchObject([{ callId: c.id, decision: 'user_approved', source: 'user', outcome: 'ok', attempts: 1 }]);
  });

  it('an observer that throws loses its record, never a result', async () => {
    const seen: CallRecord[] = [];
    const dispatcher = createDispatcher({
      defaultDecision: 'allow',
      tools: [add],
      onRecord: () => {
        throw new Error('log full');
      },
    });
    const { results } = await dispatcher.dispatch([call('add', { a: 1, b: 1 })], { turnId: 't', onRecord: (r) => seen.push(r) });
    expect(results).toMatchObject([{ output: 2, isError: false }]);
    expect(seen).toHaveLength(1);
  });
});

describe('the context and transcript hooks and policies see', () => {
  const transcript: Message[] = [
    { role: 'system', content: 'Be careful.' },
    { role: 'user', content: 'Clean up /tmp.' },
  ];

  it("merges the caller's context over the dispatcher's, for hooks, policies and records", async () => {
    const seen: { hook?: CallInfo; policy?: CallInfo } = {};
    const records: CallRecord[] = [];
    const dispatcher = createDispatcher({
      defaultDecision: 'allow',
      tools: [shell],
      context: { userId: 'u-7', cwd: '/srv' },
      hooks: { before: [{ name: 'look', run: (info) => void (seen.hook = info) }] },
      policy: (info) => {
        seen.policy = info;
        return info.context['cwd'] === '/tmp' ? { kind: 'allow' } : { kind: 'deny', reason: 'only in /tmp' };
      },
      onRecord: (r) => records.push(r),
    });
    const ctx = { turnId: 't-9', context: { sessionId: 's-1', cwd: '/tmp' }, transcript };
    const { results } = await dispatcher.dispatch([call('shell', { cmd: 'ls' })], ctx);
    expect(results).toMatchObject([{ isError: false }]);
    const context = { userId: 'u-7', cwd: '/tmp', sessionId: 's-1' };
    expect(seen.hook).toMatchObject({ turnId: 't-9', context, transcript });
    expect(seen.policy).toMatchObject({ turnId: 't-9', context, transcript });
    expect(records[0]?.context).toEqual(context);
  });

  it('gives a frozen copy of the transcript, made once per dispatch, so hooks cannot change the conversation', async () => {
    const views: (readonly Message[])[] = [];
    const refused: string[] = [];
    const attempt = (what: string, change: () => unknown): void => {
      try {
        change();
      } catch (error) {
        if (error instanceof TypeError) refused.push(what);
      }
    };
    const dispatcher = createDispatcher({
      defaultDecision: 'allow',
      tools: [echo, add],
      hooks: {
        before: [
          {
            name: 'meddle',
            run: (info) => {
              views.push(info.transcript, info.transcript);
              attempt('push', () => (info.transcript as Message[]).push({ role: 'user', content: 'injected' }));
              attempt('edit', () => Object.assign(info.transcript[1] as object, { content: 'changed' }));
              return undefined;
            },
          },
        ],
      },
    });
    const { results } = await dispatcher.dispatch([call('echo', { text: 'a' }), call('add', { a: 1, b: 2 })], {
      turnId: 't',
      transcript,
    });
    expect(results.map((r) => r.isError)).toEqual([false, false]);
    expect(refused).toEqual(['push', 'edit', 'push', 'edit']);
    expect(new Set(views).size).toBe(1);
    expect(views[0]).toEqual(transcript);
    expect(views[0]).not.toBe(transcript);
    expect(transcript).toEqual([
      { role: 'system', content: 'Be careful.' },
      { role: 'user', content: 'Clean up /tmp.' },
    ]);
  });

  it("a hook cannot change the dispatcher's context for the next call", async () => {
    const seen: string[] = [];
    const dispatcher = createDispatcher({
      defaultDecision: 'allow',
      tools: [echo],
      context: { user: { id: 'u-1' } },
      hooks: {
        before: [
          {
            name: 'tamper',
            run: ({ context }) => {
              seen.push(JSON.stringify(context));
              try {
                (context['user'] as { id: string }).id = 'root';
              } catch {
                // Frozen: the attempt fails.
              }
              return undefined;
            },
          },
        ],
      },
    });
    await dispatcher.dispatch([call('echo', { text: 'a' })], { turnId: 't' });
    await dispatcher.dispatch([call('echo', { text: 'b' })], { turnId: 't' });
    expect(seen).toEqual(['{"user":{"id":"u-1"}}', '{"user":{"id":"u-1"}}']);
  });

  it('without them, hooks see an empty context and transcript', async () => {
    let info: CallInfo | undefined;
    const dispatcher = createDispatcher({
      defaultDecision: 'allow',
      tools: [echo],
      hooks: { before: [{ name: 'look', run: (i) => void (info = i) }] },
    });
    await dispatcher.dispatch([call('echo', { text: 'a' })], { turnId: 't' });
    expect([info?.context, info?.transcript]).toEqual([{}, []]);
  });

  it('refuses a context that is not a JSON object', async () => {
    expect(() => createDispatcher({ defaultDecision: 'allow', tools: [], context: 'prod' as never })).toThrow(
      'createDispatcher: context must be a JSON object, like { sessionId, userId, cwd }; got string "prod".',
    );
    const dispatcher = createDispatcher({ defaultDecision: 'allow', tools: [echo] });
    const { results } = await dispatcher.dispatch([call('echo', { text: 'a' })], {
      turnId: 't',
      context: { at: new Date() } as never,
    });
    expect(results).toMatchObject([
      {
        isError: true,
        errorKind: 'internal',
        output: expect.stringContaining('context must be a JSON object, like { sessionId, userId, cwd }'),
      },
    ]);
  });
});
