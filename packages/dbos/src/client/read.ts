// `get` and `list` on DBOS: a turn (its log, inbox and journal) or a thread read as of one moment,
// and pages of turns, in the store's shapes.

import { isTerminal, type Message, type Outcome, type TurnError } from '@turnkit/core';
import type { StoreClient, StoredStatus, StoredThread, StoredTurn } from '@turnkit/store';
import {
  type ChildLogEntry,
  checkList,
  childTurns,
  contextOf,
  ISO,
  readState,
  toInboxEntry,
  toJournalEntry,
  toStoredThread,
  toTurnSummary,
  undecidedParked,
} from '@turnkit/store/internal';
import type pg from 'pg';
import type { ClientParts } from './parts.js';
import { transaction } from '../schema.js';
import { CURRENT_SQL } from './threads.js';

/** A turn (its log, inbox and journal) or a thread, as of one moment (one snapshot: a write in between shows in all or none). */
export async function get(
  { pool, schema: s }: ClientParts,
  ref: string | { readonly thread: string },
): Promise<StoredTurn | StoredThread | null> {
  const thread = typeof ref === 'object' && ref !== null ? ref.thread : undefined;
  if (thread === undefined && typeof ref !== 'string')
    throw new TypeError(`store.get takes a turn id or { thread }, got ${JSON.stringify(ref)}.`);
  return transaction<StoredTurn | StoredThread | null>(
    pool,
    (db) => (thread === undefined ? readTurn(db, s, ref as string) : readThread(db, s, thread)),
    'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
  );
}

/** A turn as `get` gives it, read in `db`'s transaction from the tables in schema `s`. */
async function readTurn(db: pg.PoolClient, s: string, id: string): Promise<StoredTurn | null> {
  const { rows } = await db.query(
    `SELECT id, agent, thread, input, status, state, error, ${ISO('created_at')}, ${ISO('updated_at')}, ${ISO('ended_at')} FROM ${s}.turns WHERE id = $1`,
    [id],
  );
  const row = rows[0];
  if (row === undefined) return null;
  const log = await db.query(`SELECT data FROM ${s}.log WHERE turn_id = $1 AND kind = 'message' ORDER BY seq`, [id]);
  const inbox = await db.query(
    `SELECT turn_id, kind, call_id, body, status, ${ISO('created_at')}, ${ISO('applied_at')} FROM ${s}.inbox WHERE turn_id = $1 ORDER BY id`,
    [id],
  );
  const calls = await db.query(
    `SELECT call_id, name, result, ${ISO('started_at')}, ${ISO('finished_at')} FROM ${s}.calls WHERE turn_id = $1 ORDER BY coalesce(started_at, finished_at), call_id`,
    [id],
  );
  const { state, unreadable } = readState(id, row.state);
  // A turn of many agents: its child turns' entries (a turn of one agent has none to read).
  const children =
    state?.agents == null
      ? []
      : childTurns(
          id,
          (await db.query(`SELECT data FROM ${s}.log WHERE turn_id = $1 AND kind = 'child' ORDER BY seq`, [id])).rows.map(
            (r) => r.data as ChildLogEntry,
          ),
        );
  const decisions = inbox.rows.map(toInboxEntry);
  const failure = (row.error ?? null) as TurnError | null;
  const outcome: Outcome | null =
    failure !== null ? { status: 'failed', error: failure } : state !== null && isTerminal(state) ? state.outcome : null;
  return {
    id: String(row.id),
    agent: String(row.agent),
    status: row.status as StoredStatus,
    input: (row.input ?? null) as string | null,
    state,
    transcript: log.rows.map((r) => r.data as Message),
    parked: undecidedParked(state, decisions),
    decisions,
    // A child turn's call (journaled under its key) by its own id, naming the child turn.
    toolCalls: calls.rows.map((r) => toJournalEntry(r, id)),
    ...(children.length === 0 ? {} : { children }),
    outcome,
    error: failure ?? unreadable ?? (outcome?.status === 'failed' ? outcome.error : null),
    thread: (row.thread ?? null) as string | null,
    createdAt: String(row.created_at),
    updatedAt: String(row.updated_at),
    endedAt: (row.ended_at ?? null) as string | null,
  };
}

/** A thread: its turns in order, its context (from its latest compaction on), and the parked calls of its current turn. */
async function readThread(db: pg.PoolClient, s: string, id: string): Promise<StoredThread | null> {
  const { rows } = await db.query(
    `SELECT th.id, th.agent, th.grants, th.close_reason, ${ISO('th.created_at', 'created_at')}, ${ISO('th.closed_at', 'closed_at')},
       ${CURRENT_SQL(s)} AS current
     FROM ${s}.threads th WHERE th.id = $1`,
    [id],
  );
  const row = rows[0];
  if (row === undefined) return null;
  const turns = await db.query(
    `SELECT id, agent, thread, status, ${ISO('created_at')}, ${ISO('updated_at')} FROM ${s}.turns WHERE thread = $1 ORDER BY seq`,
    [id],
  );
  const context = await db.query(
    `WITH since AS (SELECT coalesce(max(t.seq), 0) AS seq FROM ${s}.turns t
       WHERE t.thread = $1 AND EXISTS (SELECT 1 FROM ${s}.log l WHERE l.turn_id = t.id AND l.kind = 'compaction'))
     SELECT l.kind, l.data FROM ${s}.turns t JOIN ${s}.log l ON l.turn_id = t.id
     WHERE t.thread = $1 AND t.seq >= (SELECT seq FROM since) AND l.kind IN ('message', 'compaction') ORDER BY t.seq, l.seq`,
    [id],
  );
  const current = (row.current ?? null) as string | null;
  const parked = current === null ? [] : ((await readTurn(db, s, current))?.parked ?? []);
  return toStoredThread(row, turns.rows, contextOf(context.rows), parked);
}

/** A page of turns, in the order they were submitted (optionally of one status), as the store's `list` gives it. */
export async function list(
  { pool, schema: s }: ClientParts,
  options: Parameters<StoreClient['list']>[0] = {},
): ReturnType<StoreClient['list']> {
  const limit = checkList(options);
  const { rows } = await pool.query(
    `SELECT seq::text AS seq, id, agent, thread, status, ${ISO('created_at')}, ${ISO('updated_at')} FROM ${s}.turns
     WHERE ($1::text IS NULL OR status = $1) AND ($2::bigint IS NULL OR seq > $2::bigint) ORDER BY seq LIMIT $3`,
    [options.status ?? null, options.cursor ?? null, limit + 1],
  );
  const page = rows.slice(0, limit);
  return { turns: page.map(toTurnSummary), cursor: rows.length > limit ? String(page[page.length - 1]?.seq) : null };
}
