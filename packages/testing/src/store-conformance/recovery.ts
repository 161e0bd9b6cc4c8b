// The store conformance suite, part: Recovery: from the journal after a worker dies, and from every checkpoint a worker writes.

import { defineTool } from '@turnkit/dispatch';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { transcriptLines } from '../transcript.js';
import { approvalAgent, asLease, crashing, settle, transcriptModel, type SuiteContext } from './support.js';
import type { ConformanceStore } from './types.js';

export function recoveryTests<S extends ConformanceStore>(ctx: SuiteContext<S>): void {
  it('recovery answers a journaled call from the journal, never re-runs a started call, and re-runs an idempotent one', async () => {
    const runs = new Map<string, number>();
    const ran = (id: string): void => void runs.set(id, (runs.get(id) ?? 0) + 1);
    const once = defineTool({
      name: 'once',
      description: 'Runs once.',
      input: z.object({}),
      execute: (_i, ctx) => (ran(ctx.callId), 'ran'),
    });
    const again = defineTool({
      name: 'again',
      description: 'Safe to repeat.',
      input: z.object({}),
      idempotent: true,
      execute: (_i, ctx) => (ran(ctx.callId), 'ran'),
    });
    const agent = {
      model: transcriptModel([
        { id: 'done1', name: 'once', input: {} },
        { id: 'mid1', name: 'once', input: {} },
        { id: 'mid2', name: 'again', input: {} },
        { id: 'new1', name: 'once', input: {} },
      ]),
      tools: [once, again],
      // Tools that change something ask by default; these run without a person.
      permissions: { allow: ['once', 'again'] },
    };
    const id = await ctx.store.submit({ agent: 'recover', input: 'go' });
    // A worker that dies right after writing `dispatching` (with the start of the batch's first
    // call, done1: a store may write it in the same statement), before any tool runs.
    const dying = crashing(ctx.store, 1);
    void ctx.options
      .createWorker({ store: dying.store, agents: { recover: agent }, leaseMs: 200, onError: () => undefined })
      .runUntilIdle();
    await dying.crashed;
    // What its tools had done when it died: done1 finished, mid1 and mid2 started, new1 not started.
    const lease = asLease(dying.lease());
    await ctx.store.callStarted(lease, { id: 'done1', name: 'once' });
    await ctx.store.callFinished(lease, { callId: 'done1', name: 'once', output: 'ran before the crash', isError: false });
    await ctx.store.callStarted(lease, { id: 'mid1', name: 'once' });
    await ctx.store.callStarted(lease, { id: 'mid2', name: 'again' });
    await settle(ctx.store, id, ctx.worker({ recover: agent }));
    const turn = await ctx.store.get(id);
    expect(turn?.status).toBe('stopped');
    expect(Object.fromEntries(runs)).toEqual({ mid2: 1, new1: 1 });
    const results = (turn?.transcript ?? []).flatMap((m) => (m.role === 'tool' ? [m.result] : []));
    expect(results.map((r) => r.callId)).toEqual(['done1', 'mid1', 'mid2', 'new1']);
    expect(results[0]?.output).toBe('ran before the crash');
    expect(results[1]).toMatchObject({ isError: true, output: expect.stringMatching(/^interrupted/) });
    expect(turn?.toolCalls.every((c) => c.result !== null)).toBe(true);
  });

  // Each write of an approval turn: 0 = before any write, then dispatching, parked, suspended,
  // dispatching (approved), boundary. A worker dies right after write k; another finishes. A store
  // may write a batch's `dispatching` state with its first call's start (c1 at write 1, c2 at
  // write 4): a worker that dies right after that write leaves the call started and never run, so
  // it ends `interrupted`. Every other call runs once.
  for (const k of [0, 1, 2, 3, 4, 5]) {
    it(`resumes from checkpoint ${k}: same transcript, every tool ran once`, async () => {
      const runs = new Map<string, number>();
      const agent = approvalAgent(runs);
      const id = await ctx.store.submit({ agent: `resume${k}`, input: 'add and pay' });
      const dying = crashing(ctx.store, k);
      // The first worker dies at write k. (On a slow machine its lease can lapse and it may take
      // the turn over from itself; the turn may then end with fewer writes and no crash: the
      // checks below hold either way.)
      const first = ctx.options.createWorker({
        store: dying.store,
        agents: { [`resume${k}`]: agent },
        leaseMs: 200,
        onError: () => undefined,
      });
      await Promise.race([first.runUntilIdle(), dying.crashed]);
      if (k >= 3 && (await ctx.store.get(id))?.status === 'awaiting_approval') {
        // It lives on past the approval: it parked the turn, now it applies the decision.
        await ctx.store.decide(id, { c2: { type: 'approve' } });
        await Promise.race([first.runUntilIdle(), dying.crashed]);
      }
      await settle(ctx.store, id, ctx.worker({ [`resume${k}`]: agent }), { c2: { type: 'approve' } });
      const turn = await ctx.store.get(id);
      expect(turn?.status).toBe('stopped');
      const lines = transcriptLines(turn?.transcript ?? []);
      // A call is interrupted only if its start rode on the write the worker died after, and then never ran.
      const interrupted = (line: string | undefined, call: string): boolean =>
        line?.startsWith(`tool ${call} `) === true && line.includes(': error interrupted:');
      const ran = { c1: !interrupted(lines[2], 'c1'), c2: !interrupted(lines[3], 'c2') };
      if (!ran.c1) expect(k).toBe(1);
      if (!ran.c2) expect(k).toBe(4);
      expect(lines).toEqual([
        'user: add and pay',
        'assistant: [c1 add, c2 pay]',
        ran.c1 ? 'tool c1 add: ok 3' : lines[2],
        ran.c2 ? 'tool c2 pay: ok "paid 3"' : lines[3],
        'assistant: done',
      ]);
      expect(Object.fromEntries(runs)).toEqual({ ...(ran.c1 ? { c1: 1 } : {}), ...(ran.c2 ? { c2: 1 } : {}) });
      expect(turn?.decisions.map((d) => [d.callId, d.status])).toEqual([['c2', 'applied']]);
    });
  }
}
