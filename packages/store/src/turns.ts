// Submitting and reading turns: `store.submit`, `store.get` and `store.list`.

import {
  createTurn,
  isTerminal,
  parseTurnState,
  undecided,
  type Message,
  type Outcome,
  type ParkedCall,
  type ToolResult,
  type TurnError,
  type TurnState,
} from '@turnkit/core';
import { ISO, MESSAGES_SQL, restoredState, STATUSES, toInboxEntry } from './columns.js';
import { messageOf, TurnExistsError } from './errors.js';
import { newTurnId } from './ids.js';
import { rowResult } from './journal.js';
import { CHANNEL_SQL } from './notify.js';
import type { Row, SqlQuery } from './sql.js';
import type {
  InboxEntry,
  JournalEntry,
  ListOptions,
  StoredStatus,
  StoredTurn,
  SubmitOptions,
  TurnPage,
  TurnSummary,
} from './types.js';

const ID = /^[A-Za-z0-9_.:@-]{1,200}$/;
/** Postgres's SQLSTATE for a unique violation (both drivers give it as `code`). */
const UNIQUE_VIOLATION = '23505';

/** Checks what `submit` was given; returns the turn's id. */
function checkSubmit(options: SubmitOptions): string {
  if (options === null || typeof options !== 'object') throw new TypeError('store.submit needs { agent, input?, id?, limits? }.');
  const { agent, input, limits } = options;
  if (typeof agent !== 'string' || agent === '')
    throw new TypeError(
      `store.submit option \`agent\` must be the name of an agent a worker registers, got ${JSON.stringify(agent)}.`,
    );
  if (input !== undefined && typeof input !== 'string') throw new TypeError('store.submit option `input` must be a string.');
  const id = options.id ?? newTurnId();
  if (typeof id !== 'string' || !ID.test(id))
    throw new TypeError(`store.submit option \`id\` must be 1 to 200 letters, digits or _ . : @ -, got ${JSON.stringify(id)}.`);
  // Checks the limits now (throws a RangeError naming a bad one), so a worker never finds them bad.
  if (limits !== undefined) createTurn({ id, limits });
  return id;
}

export async function submitTurn(db: SqlQuery, options: SubmitOptions): Promise<string> {
  const id = checkSubmit(options);
  // The insert and the wake-up of listening workers in one statement (delivered on commit).
  // A plain insert (no ON CONFLICT, whose speculative insert costs write-ahead log on every submit):
  // an id that exists is the primary key's unique violation, also when submits of one id race (the
  // losers wait for the winner's insert to commit, then fail on its key).
  try {
    await db.query(
      `WITH t AS (INSERT INTO turnkit_turns (id, agent, input, limits, status) VALUES ($1, $2, $3, $4::jsonb, 'ready') RETURNING id)
       SELECT id, pg_notify(${CHANNEL_SQL}, id) FROM t`,
      [id, options.agent, options.input ?? null, options.limits === undefined ? null : JSON.stringify(options.limits)],
    );
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === UNIQUE_VIOLATION) throw new TurnExistsError(id);
    throw error;
  }
  return id;
}

/** The stored state, or the reason it cannot be read. */
function readState(id: string, raw: unknown): { state: TurnState | null; unreadable: TurnError | null } {
  if (raw === null || raw === undefined) return { state: null, unreadable: null };
  try {
    return { state: parseTurnState(raw), unreadable: null };
  } catch (error) {
    return {
      state: null,
      unreadable: { kind: 'corrupt_state', message: `The stored state of turn '${id}' cannot be read (${messageOf(error)}).` },
    };
  }
}

function toJournalEntry(r: Row): JournalEntry {
  return {
    callId: String(r.call_id),
    name: String(r.name),
    startedAt: (r.started_at ?? null) as string | null,
    finishedAt: (r.finished_at ?? null) as string | null,
    result: rowResult(r),
  };
}

/**
 * Parked calls with no decision yet, neither applied nor waiting in the inbox. A decision that
 * cannot be read (`decision: null`) decides nothing: its call is still listed.
 */
function undecidedParked(state: TurnState | null, decisions: readonly InboxEntry[]): ParkedCall[] {
  if (state === null || state.status !== 'awaiting_approval' || state.batch === null) return [];
  const decided = new Set(
    decisions.filter((d) => d.kind === 'decision' && d.status !== 'ignored' && d.decision !== null).map((d) => d.callId),
  );
  return undecided(state).filter((p) => !decided.has(p.call.id));
}

export async function getTurn(db: SqlQuery, id: string): Promise<StoredTurn | null> {
  const [row] = await db.query(
    `SELECT id, agent, input, status, state, state_limits, error, ${ISO('created_at')}, ${ISO('updated_at')}, ${ISO('ended_at')} FROM turnkit_turns WHERE id = $1`,
    [id],
  );
  if (row === undefined) return null;
  const [log, inbox, calls] = await Promise.all([
    db.query(MESSAGES_SQL, [id]),
    db.query(
      `SELECT kind, call_id, body, status, ${ISO('created_at')}, ${ISO('applied_at')} FROM turnkit_inbox WHERE turn_id = $1 ORDER BY id`,
      [id],
    ),
    db.query(
      `SELECT call_id, name, result, ${ISO('started_at')}, ${ISO('finished_at')} FROM turnkit_tool_results WHERE turn_seq = (SELECT seq FROM turnkit_turns WHERE id = $1) ORDER BY coalesce(started_at, finished_at), call_id`,
      [id],
    ),
  ]);
  const { state, unreadable } = readState(id, restoredState(row.id, row.state, row.state_limits));
  const decisions = inbox.map(toInboxEntry);
  const storeError = (row.error ?? null) as TurnError | null;
  const outcome: Outcome | null =
    storeError !== null ? { status: 'failed', error: storeError } : state !== null && isTerminal(state) ? state.outcome : null;
  return {
    id: String(row.id),
    agent: String(row.agent),
    status: row.status as StoredStatus,
    input: (row.input ?? null) as string | null,
    state,
    transcript: log.map((r) => r.data as Message),
    parked: undecidedParked(state, decisions),
    decisions,
    toolCalls: calls.map(toJournalEntry),
    outcome,
    error: storeError ?? unreadable ?? (outcome?.status === 'failed' ? outcome.error : null),
    createdAt: String(row.created_at),
    updatedAt: String(row.updated_at),
    endedAt: (row.ended_at ?? null) as string | null,
  };
}

function checkList(options: ListOptions): number {
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
  const rows = await db.query(
    `SELECT seq::text AS seq, id, agent, status, ${ISO('created_at')}, ${ISO('updated_at')} FROM turnkit_turns
     WHERE ($1::text IS NULL OR status = $1) AND ($2::bigint IS NULL OR seq > $2::bigint) ORDER BY seq LIMIT $3`,
    [options.status ?? null, options.cursor ?? null, limit + 1],
  );
  const page = rows.slice(0, limit);
  const turns = page.map(
    (r): TurnSummary => ({
      id: String(r.id),
      agent: String(r.agent),
      status: r.status as StoredStatus,
      createdAt: String(r.created_at),
      updatedAt: String(r.updated_at),
    }),
  );
  return { turns, cursor: rows.length > limit ? String(page[page.length - 1]?.seq) : null };
}
