// Threads of turns on DBOS, as the store keeps them: a submit and a close lock the thread's row,
// `listThreads` pages through them, and a close cancels each turn of it that has not ended.

import { type StoreClient, type ThreadPage, ThreadBusyError, ThreadNotFoundError } from '@turnkit/store';
import { checkListThreads, checkThreadTakes, ISO, toThreadSummary } from '@turnkit/store/internal';
import type pg from 'pg';
import { transaction } from '../schema.js';
import type { ClientParts } from './parts.js';
import { cancelIn } from './cancel.js';

/** The turn of a thread (over the thread's id as `th.id`) that has not ended and runs first. */
export const CURRENT_SQL = (s: string): string =>
  `(SELECT c.id FROM ${s}.turns c WHERE c.thread = th.id AND c.ended_at IS NULL ORDER BY c.seq LIMIT 1)`;

/**
 * Locks the thread's row for this transaction (made when the id is new), and checks it takes this
 * turn (the store's checks): it is open, of the same agent, and (with `refuse`) has no turn that has not ended.
 */
export async function lockThread(
  { schema: s }: ClientParts,
  tx: pg.PoolClient,
  thread: string,
  agent: string,
  whenBusy: 'wait' | 'refuse',
): Promise<void> {
  await tx.query(`INSERT INTO ${s}.threads (id, agent) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, [thread, agent]);
  const { rows } = await tx.query(`SELECT agent, closed_at IS NOT NULL AS closed FROM ${s}.threads WHERE id = $1 FOR UPDATE`, [
    thread,
  ]);
  checkThreadTakes(thread, rows[0], agent);
  if (whenBusy === 'wait') return;
  const busy = await tx.query(`SELECT id, status FROM ${s}.turns WHERE thread = $1 AND ended_at IS NULL ORDER BY seq LIMIT 1`, [
    thread,
  ]);
  const open = busy.rows[0];
  if (open !== undefined) throw new ThreadBusyError(thread, String(open.id), String(open.status));
}

/** A page of threads, by id (the store's checks and shapes). */
export async function listThreads(
  { pool, schema: s }: ClientParts,
  options: Parameters<StoreClient['listThreads']>[0] = {},
): Promise<ThreadPage> {
  const { limit, cursor } = checkListThreads(options);
  const { rows } = await pool.query(
    `SELECT th.id, th.agent, ${ISO('th.created_at', 'created_at')}, ${ISO('th.closed_at', 'closed_at')},
       (SELECT count(*) FROM ${s}.turns n WHERE n.thread = th.id)::int AS turns, ${CURRENT_SQL(s)} AS current
     FROM ${s}.threads th WHERE $1::text IS NULL OR th.id > $1 ORDER BY th.id LIMIT $2`,
    [cursor, limit + 1],
  );
  const page = rows.slice(0, limit);
  return { threads: page.map(toThreadSummary), cursor: rows.length > limit ? String(page[page.length - 1]?.id) : null };
}

/** Closes the thread: no more turns, its grants end, and each of its turns that has not ended is cancelled. */
export async function closeThread(parts: ClientParts, thread: string, reason?: string): Promise<boolean> {
  const { pool, schema: s } = parts;
  if (reason !== undefined && typeof reason !== 'string') throw new TypeError('store.closeThread: `reason` must be a string.');
  const why = reason ?? 'the thread was closed';
  return transaction(pool, async (tx) => {
    // Locked as a submit locks it: a submit of this thread waits, then finds it closed.
    const { rows } = await tx.query(`SELECT closed_at FROM ${s}.threads WHERE id = $1 FOR UPDATE`, [thread]);
    const row = rows[0];
    if (row === undefined) throw new ThreadNotFoundError(thread);
    if (row.closed_at !== null) return false;
    await tx.query(`UPDATE ${s}.threads SET closed_at = now(), close_reason = $2, grants = '[]' WHERE id = $1`, [thread, why]);
    const open = await tx.query(`SELECT id FROM ${s}.turns WHERE thread = $1 AND ended_at IS NULL ORDER BY seq`, [thread]);
    for (const turn of open.rows) await cancelIn(parts, tx, String(turn.id), why);
    return true;
  });
}
