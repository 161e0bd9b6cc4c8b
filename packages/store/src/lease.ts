// The lease a worker holds on a turn: checked lengths, and renewal (fenced by the token). Claims
// are in claim.ts, checkpoints in checkpoint.ts, the tool journal in journal.ts.

import { LeaseLostError } from './errors.js';
import type { SqlQuery } from './sql.js';
import type { Lease } from './types.js';

export function checkLeaseMs(leaseMs: unknown, what = 'leaseMs'): void {
  if (typeof leaseMs !== 'number' || !Number.isInteger(leaseMs) || leaseMs < 0 || leaseMs > 2_147_483_647) {
    throw new RangeError(`${what} must be a whole number of milliseconds >= 0, got ${String(leaseMs)}.`);
  }
}

export async function renewLease(db: SqlQuery, lease: Lease, leaseMs: number): Promise<void> {
  checkLeaseMs(leaseMs);
  const rows = await db.query(
    `UPDATE turnkit_turns SET lease_expires_at = now() + $3::int * interval '1 millisecond' WHERE id = $1 AND lease_token = $2 RETURNING id`,
    [lease.id, lease.token, leaseMs],
  );
  if (rows.length === 0) throw new LeaseLostError(lease.id);
}
