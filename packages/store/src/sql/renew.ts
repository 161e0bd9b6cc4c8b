// Renewing a lease (fenced by its token): the worker keeps the turn while it runs. Only a held lease
// is renewed: a renewal that reaches the database after the lease was given back (a write that
// released the turn, ended it, or a release) is refused, so it never makes the turn unclaimable again.

import type { SqlQuery } from '../db/types.js';
import { LeaseLostError } from '../errors.js';
import type { Lease } from '../types.js';
import { checkLeaseMs } from './values.js';

export async function renewLease(db: SqlQuery, lease: Lease, leaseMs: number): Promise<void> {
  checkLeaseMs(leaseMs);
  const rows = await db.query(
    `UPDATE turnkit_turns SET lease_expires_at = now() + $3::int * interval '1 millisecond' WHERE id = $1 AND lease_token = $2 AND lease_owner IS NOT NULL RETURNING id`,
    [lease.id, lease.token, leaseMs],
  );
  if (rows.length === 0) throw new LeaseLostError(lease.id);
}
