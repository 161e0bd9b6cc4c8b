// Handing a held turn back: its lease ends now, and workers are woken when it is runnable.

import { CHANNEL_SQL } from '../db/notify.js';
import type { SqlQuery } from '../db/types.js';

/** Hands a turn back (fenced): its lease ends now, so any worker may take it at once. */
export async function releaseLease(db: SqlQuery, lease: { readonly id: string; readonly token: number }): Promise<boolean> {
  const rows = await db.query(
    `WITH t AS (UPDATE turnkit_turns SET lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
                WHERE id = $1 AND lease_token = $2 AND lease_owner IS NOT NULL RETURNING id, runnable, run_after)
     SELECT runnable, pg_notify(${CHANNEL_SQL}, id) FROM t WHERE t.runnable AND t.run_after IS NULL`,
    [lease.id, lease.token],
  );
  return rows.length > 0;
}
