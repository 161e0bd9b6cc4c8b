// A process that drives one stored turn to its end: runs a worker, approves parked calls, and
// exits when the turn is terminal. The crash tests start it with TURNKIT_STORE_CRASH_AT set (it
// then dies by SIGKILL at that point) and again without it to recover the turn.
//   node --import tsx --conditions=@turnkit/source drive.ts <url> <schema or -> <turnId>
// Its tools record each side effect in `crash_side_effects` (turn, call, pid), in the same database.

import type { Model, ModelRequest, ModelResponse } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import { z } from 'zod';
import { createStore, createWorker, openSql, type Sql } from '../../src/index.js';

const [url, schemaArg, turnId] = process.argv.slice(2) as [string, string, string];
const schema = schemaArg === '-' ? undefined : schemaArg;
const AGENT = 'crash';
const LEASE_MS = 1200;

/** Answers from the transcript, so a recovered turn gets the same replies: add and pay, then 'done'. */
const model: Model = {
  async generate(request: ModelRequest): Promise<ModelResponse> {
    if (request.messages[request.messages.length - 1]?.role === 'tool') return { text: 'done', toolCalls: [] };
    return {
      text: '',
      toolCalls: [
        { id: 'c1', name: 'add', input: { a: 1, b: 2 } },
        { id: 'c2', name: 'pay', input: { amount: 3 } },
      ],
    };
  },
};

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function tools(sql: Sql) {
  // The side effect is written first; the tool then keeps running a while (the `tool_running` point fires meanwhile).
  const sideEffect = async (ctx: { readonly turnId: string; readonly callId: string }): Promise<void> => {
    await sql.query('INSERT INTO crash_side_effects (turn_id, call_id, pid) VALUES ($1, $2, $3)', [
      ctx.turnId,
      ctx.callId,
      process.pid,
    ]);
    await pause(150);
  };
  const add = defineTool({
    name: 'add',
    description: 'Adds two numbers.',
    input: z.object({ a: z.number(), b: z.number() }),
    execute: async ({ a, b }, ctx) => (await sideEffect(ctx), a + b),
  });
  const pay = defineTool({
    name: 'pay',
    description: 'Pays an amount.',
    input: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: async ({ amount }, ctx) => (await sideEffect(ctx), `paid ${amount}`),
  });
  return [add, pay];
}

async function main(): Promise<void> {
  const sql = await openSql(url, schema === undefined ? {} : { schema });
  await sql.query(
    'CREATE TABLE IF NOT EXISTS crash_side_effects (id serial PRIMARY KEY, turn_id text NOT NULL, call_id text NOT NULL, pid integer NOT NULL)',
  );
  const store = createStore(sql);
  const worker = createWorker({ store, agents: { [AGENT]: { model, tools: tools(sql) } }, leaseMs: LEASE_MS });
  for (;;) {
    const turn = await store.get(turnId);
    if (turn === null) throw new Error(`no turn '${turnId}'`);
    if (['stopped', 'failed', 'cancelled'].includes(turn.status)) break;
    if (turn.parked.length > 0) {
      const ids = turn.parked.map((p) => p.call.id);
      const { accepted } = await store.decide(turnId, Object.fromEntries(ids.map((id) => [id, { type: 'approve' as const }])));
      // Acknowledged: decide returned. The parent checks each of these is applied in the end.
      for (const id of accepted) process.stdout.write(`acknowledged ${id}\n`);
      continue;
    }
    await worker.runUntilIdle();
    // Nothing claimable yet: a dead process's lease has to expire first.
    await pause(100);
  }
  await store.close();
}

await main();
