// The chaos agent, shared by the chaos worker processes and the partition test: each turn calls
// `record` (runs at once) and `pay` (needs approval), then answers. Both tools write their side
// effect to `chaos_effects` (turn, call, pid: no key, so a second run would show as a second row)
// and then keep running a while, so a kill often lands mid-call. The model answers from the
// transcript, so a recovered turn gets the same replies; the first call of every tenth turn fails
// with a retryable error once (remembered in `chaos_model_failures`), so retries wait in the database.

import type { Model, ModelRequest, ModelResponse } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import { z } from 'zod';
import type { SqlQuery } from '../../src/index.js';

export const CHAOS_AGENT = 'chaos';

export const CHAOS_TABLES = [
  'CREATE TABLE IF NOT EXISTS chaos_effects (id serial PRIMARY KEY, turn_id text NOT NULL, call_id text NOT NULL, pid integer NOT NULL, at timestamptz NOT NULL DEFAULT now())',
  'CREATE TABLE IF NOT EXISTS chaos_model_failures (turn_id text PRIMARY KEY)',
];

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export function chaosAgent(db: SqlQuery, toolMs: () => number) {
  const sideEffect = async (ctx: { readonly turnId: string; readonly callId: string }): Promise<void> => {
    await db.query('INSERT INTO chaos_effects (turn_id, call_id, pid) VALUES ($1, $2, $3)', [
      ctx.turnId,
      ctx.callId,
      process.pid,
    ]);
    await pause(toolMs());
  };
  const record = defineTool({
    name: 'record',
    description: 'Records a note.',
    input: z.object({ note: z.string() }),
    execute: async ({ note }, ctx) => (await sideEffect(ctx), `recorded ${note}`),
  });
  const pay = defineTool({
    name: 'pay',
    description: 'Pays an amount.',
    input: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: async ({ amount }, ctx) => (await sideEffect(ctx), `paid ${amount}`),
  });
  const model: Model = {
    async generate(request: ModelRequest): Promise<ModelResponse> {
      await pause(20);
      const user = request.messages.find((m) => m.role === 'user');
      const input = user?.role === 'user' && typeof user.content === 'string' ? user.content : '';
      if (request.messages.some((m) => m.role === 'tool')) return { text: `done: ${input}`, toolCalls: [] };
      const n = Number(/\d+/.exec(input)?.[0] ?? 0);
      if (n % 10 === 0) {
        const rows = await db.query(
          'INSERT INTO chaos_model_failures (turn_id) VALUES ($1) ON CONFLICT DO NOTHING RETURNING turn_id',
          [input],
        );
        if (rows.length > 0)
          throw Object.assign(new Error('rate limited (chaos)'), { retryable: true, data: { retryAfterMs: 400 } });
      }
      return {
        text: '',
        toolCalls: [
          { id: 'rec', name: 'record', input: { note: input } },
          { id: 'pay', name: 'pay', input: { amount: n } },
        ],
      };
    },
  };
  return { model, tools: [record, pay], limits: { modelRetryBackoffMs: 200 } };
}
