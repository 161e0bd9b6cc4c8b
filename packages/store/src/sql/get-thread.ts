// `store.get({ thread })` and `store.listThreads`: a thread with its turns in order, its context
// (what its next model request starts from) and the parked calls of its current turn.

import type { Grant } from '@turnkit/dispatch';
import type { Row, SqlQuery } from '../db/types.js';
import type { ListOptions, StoredThread, ThreadPage, ThreadSummary } from '../types.js';
import { getTurn } from './get-turn.js';
import { toTurnSummary } from './list-turns.js';
import { readThreadContext } from './thread-context.js';
import { ISO } from './values.js';

/** The turn of the thread that has not ended and runs first (SQL, over the thread's id as `th.id`). */
const CURRENT_SQL = `(SELECT c.id FROM turnkit_turns c WHERE c.thread = th.id AND c.ended_at IS NULL ORDER BY c.seq LIMIT 1)`;

export async function getThread(db: SqlQuery, id: string): Promise<StoredThread | null> {
  const [row] = await db.query(
    `SELECT th.id, th.agent, th.grants, th.close_reason, ${ISO('th.created_at', 'created_at')}, ${ISO('th.closed_at', 'closed_at')},
       ${CURRENT_SQL} AS current
     FROM turnkit_threads th WHERE th.id = $1`,
    [id],
  );
  if (row === undefined) return null;
  const [turns, transcript] = await Promise.all([
    db.query(
      `SELECT id, agent, thread, status, ${ISO('created_at')}, ${ISO('updated_at')} FROM turnkit_turns WHERE thread = $1 ORDER BY seq`,
      [id],
    ),
    readThreadContext(db, id),
  ]);
  const current = (row.current ?? null) as string | null;
  const parked = current === null ? [] : ((await getTurn(db, current))?.parked ?? []);
  return toStoredThread(row, turns, transcript, parked);
}

/**
 * A thread as `get({ thread })` gives it, from its row (`id`, `agent`, `grants`, `close_reason`,
 * `current`, `created_at` and `closed_at` as ISO text), its turns' rows in order, its context and
 * the parked calls of its current turn (the store's and the DBOS adapter's, whose tables differ).
 */
export function toStoredThread(
  row: Row,
  turns: readonly Row[],
  transcript: StoredThread['transcript'],
  parked: StoredThread['parked'],
): StoredThread {
  const closed = row.closed_at !== null && row.closed_at !== undefined;
  return {
    id: String(row.id),
    agent: String(row.agent),
    status: closed ? 'closed' : 'open',
    turns: turns.map(toTurnSummary),
    transcript,
    current: (row.current ?? null) as string | null,
    parked,
    grants: closed ? [] : ((row.grants ?? []) as Grant[]),
    closeReason: (row.close_reason ?? null) as string | null,
    createdAt: String(row.created_at),
    closedAt: closed ? String(row.closed_at) : null,
  };
}

/** A row (`id`, `agent`, `turns`, `current`, `created_at`, `closed_at` as ISO text) as a thread's summary. */
export function toThreadSummary(r: Row): ThreadSummary {
  const closed = r.closed_at !== null && r.closed_at !== undefined;
  return {
    id: String(r.id),
    agent: String(r.agent),
    status: closed ? 'closed' : 'open',
    turns: Number(r.turns),
    current: (r.current ?? null) as string | null,
    createdAt: String(r.created_at),
    closedAt: closed ? String(r.closed_at) : null,
  };
}

/** Checks `listThreads`'s options; returns the page's size and the cursor (a thread id, or null). */
export function checkListThreads(options: Omit<ListOptions, 'status'>): { limit: number; cursor: string | null } {
  const limit = options.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new RangeError(`store.listThreads option \`limit\` must be a whole number from 1 to 1000, got ${String(limit)}.`);
  const cursor = options.cursor ?? null;
  if (cursor !== null && typeof cursor !== 'string')
    throw new TypeError(
      `store.listThreads option \`cursor\` must be the cursor of a previous page, got ${JSON.stringify(cursor)}.`,
    );
  return { limit, cursor };
}

/** Threads in the order they were made, a page at a time (the cursor is the last id's creation time and id). */
export async function listThreads(db: SqlQuery, options: Omit<ListOptions, 'status'> = {}): Promise<ThreadPage> {
  const { limit, cursor } = checkListThreads(options);
  const rows = await db.query(
    `SELECT th.id, th.agent, ${ISO('th.created_at', 'created_at')}, ${ISO('th.closed_at', 'closed_at')},
       (SELECT count(*) FROM turnkit_turns n WHERE n.thread = th.id)::int AS turns, ${CURRENT_SQL} AS current
     FROM turnkit_threads th ${cursor === null ? '' : 'WHERE th.id > $2'} ORDER BY th.id LIMIT $1`,
    cursor === null ? [limit + 1] : [limit + 1, cursor],
  );
  const page = rows.slice(0, limit);
  return { threads: page.map(toThreadSummary), cursor: rows.length > limit ? String(page[page.length - 1]?.id) : null };
}
