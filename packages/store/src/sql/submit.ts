// `store.submit`: a turn queued for a worker, and listening workers woken, in one statement.

import { createTurn } from '@turnkit/core';
import type { SubmitOptions } from '../types.js';
import { CHANNEL_SQL } from '../db/notify.js';
import type { SqlQuery } from '../db/types.js';
import { TurnExistsError } from '../errors.js';
import { newTurnId } from '../ids.js';

const ID = /^[A-Za-z0-9_.:@-]{1,200}$/;
/** Postgres's SQLSTATE for a unique violation (both drivers give it as `code`). */
const UNIQUE_VIOLATION = '23505';

/** Checks what `submit` was given; returns the turn's id. */
export function checkSubmit(options: SubmitOptions): string {
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
