// `store.decide`'s refusals as typed errors (all or nothing), and what a worker marks a decision row
// it takes for a call the turn has not parked: on PGlite in memory and, when
// TURNKIT_TEST_POSTGRES_URL is set, on a real Postgres in a scratch schema.

import { z } from 'zod';
import { afterAll, describe, expect, it } from 'vitest';
import type { Model } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import {
  CallAlreadyDecidedError,
  createWorker,
  type Store,
  TurnNotFoundError,
  TurnNotWaitingError,
  UnknownCallError,
} from '@turnkit/store';
import { createStore, openSql, type Sql } from '../src/internal.js';
import { dropSchema, POSTGRES_URL, scratchSchema, WHY_SKIPPED } from './postgres.js';

/** Asks for `pay` c1 and c2 (both need approval), then answers 'done'. */
const model: Model = {
  async generate(request) {
    if (request.messages.at(-1)?.role === 'tool') return { text: 'done', toolCalls: [], finishReason: 'stop' };
    return {
      text: '',
      toolCalls: [
        { id: 'c1', name: 'pay', input: { n: 1 } },
        { id: 'c2', name: 'pay', input: { n: 2 } },
      ],
      finishReason: 'tool_calls',
    };
  },
};

function agents(paid: string[]) {
  const pay = defineTool({
    name: 'pay',
    description: 'Pays.',
    input: z.object({ n: z.number() }),
    needsApproval: true,
    execute: ({ n }, ctx) => (paid.push(ctx.callId), `paid ${n}`),
  });
  return { payer: { model, tools: [pay] } };
}

const schema = scratchSchema('decide');
const targets = [
  { name: 'PGlite (memory://)', open: () => openSql('memory://'), skip: false as const },
  {
    name: 'Postgres',
    open: () => openSql(POSTGRES_URL ?? '', { schema }),
    skip: POSTGRES_URL === undefined ? WHY_SKIPPED : (false as const),
  },
];
afterAll(() => dropSchema(schema));

describe.each(targets)('store.decide on $name', ({ open, skip }) => {
  /** A store over a fresh connection, with a turn parked on c1 and c2. */
  async function parked(run: (store: Store, sql: Sql, id: string, paid: string[]) => Promise<void>): Promise<void> {
    const sql = await open();
    const store = createStore(sql);
    try {
      const paid: string[] = [];
      const id = await store.submit({ agent: 'payer', input: 'pay twice' });
      await createWorker({ store, agents: agents(paid) }).runUntilIdle();
      expect((await store.get(id))?.parked.map((p) => p.call.id)).toEqual(['c1', 'c2']);
      await run(store, sql, id, paid);
    } finally {
      await store.close();
    }
  }

  const statuses = async (store: Store, id: string) =>
    (await store.get(id))?.decisions.map((d) => [d.callId, d.status]) ?? 'no turn';

  it.skipIf(Boolean(skip))('throws a typed error for each refusal and stores nothing of the request', async () => {
    await parked(async (store, _sql, id, paid) => {
      const missing = await store.decide('turn_missing', { c1: { type: 'approve' } }).catch((e: unknown) => e);
      expect(missing).toBeInstanceOf(TurnNotFoundError);
      expect(missing).toMatchObject({ name: 'TurnNotFoundError', turnId: 'turn_missing' });
      await expect(store.cancel('turn_missing')).rejects.toBeInstanceOf(TurnNotFoundError);

      const unknown = await store
        .decide(id, { c1: { type: 'approve' }, c8: { type: 'approve' }, c9: { type: 'reject' } })
        .catch((e: unknown) => e);
      expect(unknown).toBeInstanceOf(UnknownCallError);
      expect(unknown).toMatchObject({ turnId: id, callIds: ['c8', 'c9'], waiting: ['c1', 'c2'] });
      expect((unknown as Error).message).toBe(
        `store.decide: turn '${id}' has no parked calls 'c8', 'c9'; its calls waiting for a decision are 'c1', 'c2'. Nothing of this request was stored; send decisions for waiting calls only.`,
      );
      expect(await statuses(store, id)).toEqual([]);

      expect(await store.decide(id, { c1: { type: 'approve' } })).toEqual({ accepted: ['c1'], ignored: [] });
      const again = await store.decide(id, { c2: { type: 'approve' }, c1: { type: 'reject' } }).catch((e: unknown) => e);
      expect(again).toBeInstanceOf(CallAlreadyDecidedError);
      expect(again).toMatchObject({ turnId: id, callIds: ['c1'] });
      expect((again as Error).message).toBe(
        `store.decide: call 'c1' of turn '${id}' has a decision already, and the first decision per call stands; nothing of this request was stored, so send any other decisions again without it.`,
      );
      // c2 was not stored with the refused request: it still waits.
      expect((await store.get(id))?.parked.map((p) => p.call.id)).toEqual(['c2']);
      expect(await statuses(store, id)).toEqual([['c1', 'pending']]);
      await expect(store.decide(id, { c3: { type: 'approve' } })).rejects.toMatchObject({ callIds: ['c3'], waiting: ['c2'] });

      expect(await store.decide(id, { c2: { type: 'reject', reason: 'once is enough' } })).toEqual({
        accepted: ['c2'],
        ignored: [],
      });
      await expect(store.decide(id, { c2: { type: 'approve' } })).rejects.toMatchObject({
        message: expect.stringMatching(/none of its calls waits for a decision now|has a decision already/),
      });
      await createWorker({ store, agents: agents(paid) }).runUntilIdle();
      expect((await store.get(id))?.status).toBe('stopped');
      expect(paid).toEqual(['c1']);
      const ended = await store.decide(id, { c2: { type: 'approve' } }).catch((e: unknown) => e);
      expect(ended).toBeInstanceOf(TurnNotWaitingError);
      expect(ended).toMatchObject({ turnId: id, status: 'stopped' });
      expect((ended as Error).message).toBe(
        `store.decide: turn '${id}' is not waiting for approval (its status is stopped); only a turn in status awaiting_approval takes decisions.`,
      );
    });
  });

  it.skipIf(Boolean(skip))('a worker marks a decision row for a call the turn has not parked ignored, not applied', async () => {
    await parked(async (store, sql, id, paid) => {
      // A row no store.decide writes (another writer of the table's) for a call the turn has not
      // parked; the turn is marked runnable as a decision would mark it.
      await sql.query(
        `INSERT INTO turnkit_inbox (turn_id, kind, call_id, body) VALUES ($1, 'decision', 'c7', '{"type":"approve"}'::jsonb)`,
        [id],
      );
      await sql.query('UPDATE turnkit_turns SET runnable = true WHERE id = $1', [id]);
      await createWorker({ store, agents: agents(paid) }).runUntilIdle();
      expect((await store.get(id))?.status).toBe('awaiting_approval');
      expect(await statuses(store, id)).toEqual([['c7', 'ignored']]);
      // Nothing is left for a worker: the turn is not runnable until a decision comes.
      const [row] = await sql.query('SELECT runnable FROM turnkit_turns WHERE id = $1', [id]);
      expect(row?.runnable).toBe(false);

      // Beside real decisions, taken with them in one checkpoint: only the real ones are applied.
      await sql.query(
        `INSERT INTO turnkit_inbox (turn_id, kind, call_id, body) VALUES ($1, 'decision', 'c8', '{"type":"reject"}'::jsonb)`,
        [id],
      );
      expect(await store.decide(id, { c1: { type: 'approve' }, c2: { type: 'reject' } })).toEqual({
        accepted: ['c1', 'c2'],
        ignored: [],
      });
      await createWorker({ store, agents: agents(paid) }).runUntilIdle();
      expect((await store.get(id))?.status).toBe('stopped');
      expect(await statuses(store, id)).toEqual([
        ['c7', 'ignored'],
        ['c8', 'ignored'],
        ['c1', 'applied'],
        ['c2', 'applied'],
      ]);
      expect(paid).toEqual(['c1']);
    });
  });
});
