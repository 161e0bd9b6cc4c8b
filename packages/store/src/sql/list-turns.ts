// `store.list`: turns in the order they were submitted, a page at a time.

import type { ListOptions, StoredStatus, TurnPage, TurnSummary } from '../types.js';
import type { Row, SqlQuery } from '../db/types.js';
import { STATUSES } from '../statuses.js';
import { ISO } from './values.js';

export function checkList(options: ListOptions): number {
  const { status, cursor } = options;
  const limit = options.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new RangeError(`store.list option \`limit\` must be a whole number from 1 to 1000, got ${String(limit)}.`);
  if (status !== undefined && !STATUSES.has(status))
    throw new TypeError(
      `store.list option \`status\` must be one of ${[...STATUSES].join(', ')}; got ${JSON.stringify(status)}.`,
    );
  if (cursor !== undefined && cursor !== null && !/^\d+$/.test(cursor))
    throw new TypeError(`store.list option \`cursor\` must be the cursor of a previous page, got ${JSON.stringify(cursor)}.`);
  return limit;
}

export async function listTurns(db: SqlQuery, options: ListOptions = {}): Promise<TurnPage> {
  const limit = checkList(options);
  // Only the filters given, so each combination is a statement whose plan uses them (a cursor is a
  // range of the seq index, not a filter over every row before it).
  const params: unknown[] = [limit + 1];
  const where: string[] = [];
  if (options.status !== undefined) where.push(`status = $${params.push(options.status)}`);
  if (options.cursor !== undefined && options.cursor !== null) where.push(`seq > $${params.push(options.cursor)}::bigint`);
  const rows = await db.query(
    `SELECT seq::text AS seq, id, agent, thread, status, ${ISO('created_at')}, ${ISO('updated_at')} FROM turnkit_turns
     ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`} ORDER BY seq LIMIT $1`,
    params,
  );
  const page = rows.slice(0, limit);
  const turns = page.map(toTurnSummary);
  return { turns, cursor: rows.length > limit ? String(page[page.length - 1]?.seq) : null };
}

/** A row (`id`, `agent`, `thread`, `status`, `created_at`, `updated_at` as ISO text) as a summary. */
export function toTurnSummary(r: Row): TurnSummary {
  return {
    id: String(r.id),
    agent: String(r.agent),
    thread: (r.thread ?? null) as string | null,
    status: r.status as StoredStatus,
    createdAt: String(r.created_at),
    updatedAt: String(r.updated_at),
  };
}
