// A decision or cancel makes its turn runnable, in the transaction that stores it.

import { CHANNEL_SQL } from '../db/notify.js';
import type { SqlQuery } from '../db/types.js';

/** Marks a turn runnable and wakes listening workers (delivered when the transaction commits). */
export function markRunnable(tx: SqlQuery, id: string): Promise<unknown> {
  return tx.query(
    // A parked turn waiting for an approval's deadline (run_after) takes a decision at once.
    `WITH t AS (UPDATE turnkit_turns SET runnable = true, run_after = CASE WHEN status = 'awaiting_approval' THEN NULL ELSE run_after END
       WHERE id = $1 RETURNING id) SELECT pg_notify(${CHANNEL_SQL}, id) FROM t`,
    [id],
  );
}
