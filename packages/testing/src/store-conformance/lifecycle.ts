// The store conformance suite, part: A turn from submit to its end (transcript, journal, list, watch), and no transaction held across a model or tool call.

import type { Model } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { transcriptLines } from '../transcript.js';
import { countingTools, transcriptModel, type SuiteContext } from './support.js';
import type { ConformanceStore } from './types.js';

export function lifecycleTests<S extends ConformanceStore>(ctx: SuiteContext<S>): void {
  it('runs a submitted turn to the end: transcript, journal, list and watch', async () => {
    const runs = new Map<string, number>();
    const { add } = countingTools(runs);
    const id = await ctx.store.submit({ agent: 'calc', input: 'What is 1 + 2?' });
    expect((await ctx.store.get(id))?.status).toBe('ready');
    await ctx
      .worker({
        calc: { model: transcriptModel([{ id: 'c1', name: 'add', input: { a: 1, b: 2 } }]), tools: [add], system: 'You add.' },
      })
      .runUntilIdle();
    const turn = await ctx.store.get(id);
    expect(turn?.status).toBe('stopped');
    expect(transcriptLines(turn?.transcript ?? [])).toEqual([
      'user: What is 1 + 2?',
      'assistant: [c1 add]',
      'tool c1 add: ok 3',
      'assistant: done',
    ]);
    expect(turn?.toolCalls.map((c) => [c.callId, c.result?.output, c.startedAt !== null])).toEqual([['c1', 3, true]]);
    expect(runs.get('c1')).toBe(1);
    const seen: string[] = [];
    for await (const event of ctx.store.watch(id, { pollMs: 5 })) seen.push(event.type);
    expect(seen.filter((t) => t === 'message')).toHaveLength(4);
    expect(seen[seen.length - 1]).toBe('status');
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<S['list']>> = (await ctx.store.list({ limit: 2, cursor })) as Awaited<ReturnType<S['list']>>;
      ids.push(...page.turns.map((t) => t.id));
      cursor = page.cursor;
    } while (cursor !== null);
    expect(ids).toContain(id);
    expect(await ctx.store.get('no_such_turn')).toBeNull();
  });

  it('no transaction is held across a model call or a tool call: both can lock the turn row meanwhile', async () => {
    // `decide` locks the turn's row (FOR UPDATE) before it finds the turn is not parked: it would
    // wait forever for a worker that held a transaction (or, on PGlite, any statement would).
    let id = '';
    const probes: string[] = [];
    const probe = async (who: string): Promise<void> => {
      try {
        await ctx.store.decide(id, { c1: { type: 'approve' } });
        probes.push(`${who}: decided`);
      } catch (error) {
        probes.push(`${who}: ${error instanceof Error ? error.message : String(error)}`);
      }
    };
    const inner = transcriptModel([{ id: 'c1', name: 'probe', input: {} }]);
    const model: Model = {
      generate: async (request, callOptions) => (await probe('model'), inner.generate(request, callOptions)),
    };
    const tool = defineTool({
      name: 'probe',
      description: 'Uses the store while it runs.',
      input: z.object({}),
      readOnly: true,
      execute: async () => (await probe('tool'), 'probed'),
    });
    id = await ctx.store.submit({ agent: 'notx', input: 'probe' });
    await ctx.worker({ notx: { model, tools: [tool] } }).runUntilIdle();
    expect((await ctx.store.get(id))?.status).toBe('stopped');
    expect(probes).toEqual([
      expect.stringMatching(/^model: .*not waiting for approval/),
      expect.stringMatching(/^tool: .*not waiting for approval/),
      expect.stringMatching(/^model: .*not waiting for approval/),
    ]);
  });
}
