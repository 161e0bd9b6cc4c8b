// `store.closeThread`: the thread takes no more turns, forgets its grants, and each of its turns
// that has not ended gets a cancel in its inbox (applied by a worker, in the thread's order).

import type { Sql } from '../db/types.js';
import { ThreadNotFoundError } from '../errors.js';
import { markRunnable } from './mark-runnable.js';

/** Closes the thread; false when it was closed already. */
export async function closeThread(sql: Sql, id: string, reason: string | undefined): Promise<boolean> {
  if (reason !== undefined && typeof reason !== 'string') throw new TypeError('store.closeThread: `reason` must be a string.');
  const why = reason ?? 'the thread was closed';
  return sql.transaction(async (tx) => {
    // Locked as a submit locks it: a submit of this thread waits, then finds it closed.
    const [row] = await tx.query('SELECT closed_at FROM turnkit_threads WHERE id = $1 FOR UPDATE', [id]);
    if (row === undefined) throw new ThreadNotFoundError(id);
    if (row.closed_at !== null && row.closed_at !== undefined) return false;
    await tx.query(`UPDATE turnkit_threads SET closed_at = now(), close_reason = $2, grants = '[]' WHERE id = $1`, [id, why]);
    const open = await tx.query('SELECT id FROM turnkit_turns WHERE thread = $1 AND ended_at IS NULL ORDER BY seq', [id]);
    for (const turn of open) {
      await tx.query(
        `INSERT INTO turnkit_inbox (turn_id, kind, body) VALUES ($1, 'cancel', $2::jsonb) ON CONFLICT (turn_id) WHERE kind = 'cancel' DO NOTHING`,
        [turn.id, JSON.stringify({ reason: why })],
      );
      await markRunnable(tx, String(turn.id));
    }
    return true;
  });
}
