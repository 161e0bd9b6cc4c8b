// A held turn's inbox rows not yet applied: decisions and a cancel waiting for its worker.

import type { SqlQuery } from '../db/types.js';
import type { Lease, PendingInbox } from '../types.js';
import { toPending } from './values.js';

export async function pendingInbox(db: SqlQuery, lease: Lease): Promise<PendingInbox[]> {
  const rows = await db.query(
    `SELECT id::text AS id, kind, call_id, body FROM turnkit_inbox WHERE turn_id = $1 AND status = 'pending' ORDER BY id`,
    [lease.id],
  );
  return rows.map(toPending);
}
