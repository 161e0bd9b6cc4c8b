// `store.cancel`: a cancel in the inbox, durable when the call returns; a worker takes it at its
// next look (while the turn runs, at each lease renewal).

import type { StoredStatus } from '../types.js';
import type { Sql } from '../db/types.js';
import { TurnNotFoundError } from '../errors.js';
import { TERMINAL } from '../statuses.js';
import { markRunnable } from './mark-runnable.js';

/** Asks for the turn to be cancelled; false when it has already ended. */
export async function cancelTurn(sql: Sql, id: string, reason: string | undefined): Promise<boolean> {
  if (reason !== undefined && typeof reason !== 'string') throw new TypeError('store.cancel: `reason` must be a string.');
  return sql.transaction(async (tx) => {
    const [row] = await tx.query('SELECT status FROM turnkit_turns WHERE id = $1 FOR UPDATE', [id]);
    if (row === undefined) throw new TurnNotFoundError(id, 'cancel');
    if (TERMINAL.has(row.status as StoredStatus)) return false;
    await tx.query(
      `INSERT INTO turnkit_inbox (turn_id, kind, body) VALUES ($1, 'cancel', $2::jsonb) ON CONFLICT (turn_id) WHERE kind = 'cancel' DO NOTHING`,
      [id, JSON.stringify({ reason: reason ?? 'cancelled by the caller' })],
    );
    await markRunnable(tx, id);
    return true;
  });
}
