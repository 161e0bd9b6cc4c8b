// Renewing a lease (fenced by its token): the worker keeps the turn while it runs.

import type { SqlQuery } from '../db/types.js';
import { LeaseLostError } from '../errors.js';
import type { Lease } from '../types.js';
import { checkLeaseMs } from './values.js';

export async function renewLease(db: SqlQuery, lease: Lease, leaseMs: number): Promise<void> {
  checkLeaseMs(leaseMs);
  const rows = await db.query(
    `UPDATE turnkit_turns SET lease_expires_at = now() + $3::int * interval '1 millisecond' WHERE id = $1 AND lease_token = $2 RETURNING id`,
    [lease.id, lease.token, leaseMs],
  );
  if (rows.length === 0) throw new LeaseLostError(lease.id);
}
