// `store.submit`: a turn queued for a worker, and listening workers woken, in one statement. A turn
// of a thread is submitted in a transaction that locks the thread's row first, so the thread's
// turns get their places in line (`seq`) in the order their submits commit.

import { createTurn } from '@turnkit/core';
import type { SubmitOptions } from '../types.js';
import { CHANNEL_SQL } from '../db/notify.js';
import type { Sql, SqlQuery } from '../db/types.js';
import { ThreadBusyError, ThreadClosedError, TurnExistsError } from '../errors.js';
import { newTurnId } from '../ids.js';

const ID = /^[A-Za-z0-9_.:@-]{1,200}$/;
/** Postgres's SQLSTATE for a unique violation (both drivers give it as `code`). */
const UNIQUE_VIOLATION = '23505';

/** Checks what `submit` was given; returns the turn's id. */
export function checkSubmit(options: SubmitOptions): string {
  if (options === null || typeof options !== 'object')
    throw new TypeError('store.submit needs { agent, input?, id?, limits?, thread?, whenBusy? }.');
  const { agent, input, limits, thread, whenBusy } = options;
  if (typeof agent !== 'string' || agent === '')
    throw new TypeError(
      `store.submit option \`agent\` must be the name of an agent a worker registers, got ${JSON.stringify(agent)}.`,
    );
  if (input !== undefined && typeof input !== 'string') throw new TypeError('store.submit option `input` must be a string.');
  const id = options.id ?? newTurnId();
  if (typeof id !== 'string' || !ID.test(id))
    throw new TypeError(`store.submit option \`id\` must be 1 to 200 letters, digits or _ . : @ -, got ${JSON.stringify(id)}.`);
  if (thread !== undefined && (typeof thread !== 'string' || !ID.test(thread)))
    throw new TypeError(
      `store.submit option \`thread\` must be 1 to 200 letters, digits or _ . : @ -, got ${JSON.stringify(thread)}.`,
    );
  if (whenBusy !== undefined && whenBusy !== 'wait' && whenBusy !== 'refuse')
    throw new TypeError(`store.submit option \`whenBusy\` must be 'wait' or 'refuse', got ${JSON.stringify(whenBusy)}.`);
  if (whenBusy !== undefined && thread === undefined)
    throw new TypeError('store.submit option `whenBusy` applies to a turn of a thread: give `thread` too, or leave it out.');
  // Checks the limits now (throws a RangeError naming a bad one), so a worker never finds them bad.
  if (limits !== undefined) createTurn({ id, limits });
  return id;
}

// The insert and the wake-up of listening workers in one statement (delivered on commit).
const INSERT_SQL = `WITH t AS (INSERT INTO turnkit_turns (id, agent, input, limits, status, thread) VALUES ($1, $2, $3, $4::jsonb, 'ready', $5) RETURNING id)
  SELECT id, pg_notify(${CHANNEL_SQL}, id) FROM t`;

export async function submitTurn(sql: Sql, options: SubmitOptions): Promise<string> {
  const id = checkSubmit(options);
  const values = [id, options.agent, options.input ?? null, options.limits === undefined ? null : JSON.stringify(options.limits)];
  // A plain insert (no ON CONFLICT, whose speculative insert costs write-ahead log on every submit):
  // an id that exists is the primary key's unique violation, also when submits of one id race (the
  // losers wait for the winner's insert to commit, then fail on its key).
  try {
    const { thread } = options;
    if (thread === undefined) await sql.query(INSERT_SQL, [...values, null]);
    else
      await sql.transaction(async (tx) => {
        await lockThread(tx, thread, options.agent, options.whenBusy ?? 'wait');
        await tx.query(INSERT_SQL, [...values, thread]);
      });
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === UNIQUE_VIOLATION) throw new TurnExistsError(id);
    throw error;
  }
  return id;
}

/**
 * Checks that a thread's locked row (`agent`, `closed`; undefined: it could not be made) takes a
 * turn of `agent`: the thread is open and of the same agent. Throws the store's errors.
 */
export function checkThreadTakes(thread: string, row: { agent?: unknown; closed?: unknown } | undefined, agent: string): void {
  if (row === undefined) throw new Error(`store.submit: thread '${thread}' could not be made; submit again.`);
  if (row.closed === true) throw new ThreadClosedError(thread);
  if (row.agent !== agent)
    throw new TypeError(
      `store.submit: thread '${thread}' belongs to agent '${String(row.agent)}', not '${agent}'; a thread's turns all run one agent (start a new thread for another).`,
    );
}

/**
 * Locks the thread's row for this transaction (made when the id is new), and checks it takes this
 * turn: it is open, of the same agent, and (with `refuse`) has no turn that has not ended.
 */
async function lockThread(tx: SqlQuery, thread: string, agent: string, whenBusy: 'wait' | 'refuse'): Promise<void> {
  // A thread's row, made on its first turn; two first turns racing wait on the key, then both lock it.
  await tx.query(
    `INSERT INTO turnkit_threads (id, agent) SELECT $1, $2 WHERE NOT EXISTS (SELECT 1 FROM turnkit_threads WHERE id = $1) ON CONFLICT (id) DO NOTHING`,
    [thread, agent],
  );
  const [row] = await tx.query(`SELECT agent, closed_at IS NOT NULL AS closed FROM turnkit_threads WHERE id = $1 FOR UPDATE`, [
    thread,
  ]);
  checkThreadTakes(thread, row, agent);
  if (whenBusy === 'wait') return;
  // A statement of its own, after the lock: its snapshot includes every turn submitted before it.
  const [busy] = await tx.query(
    'SELECT id, status FROM turnkit_turns WHERE thread = $1 AND ended_at IS NULL ORDER BY seq LIMIT 1',
    [thread],
  );
  if (busy !== undefined) throw new ThreadBusyError(thread, String(busy.id), String(busy.status));
}
