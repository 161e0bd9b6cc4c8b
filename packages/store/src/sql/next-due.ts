// When the next waiting turn becomes claimable: a worker sleeps until then (unless woken sooner).

import type { SqlQuery } from '../db/types.js';

/**
 * Milliseconds until the next runnable turn becomes claimable, or null when none waits for time to
 * pass: `retries` counts retries falling due; `any` also leases expiring (a dead worker's turns) and
 * parked turns whose approval expires (a running worker wakes for those; `runUntilIdle` does not wait).
 */
export async function nextDue(db: SqlQuery, what: 'any' | 'retries'): Promise<number | null> {
  const [row] = await db.query(
    what === 'retries'
      ? `SELECT ceil(extract(epoch FROM min(run_after) - now()) * 1000)::float8 AS ms FROM turnkit_turns
         WHERE runnable AND run_after > now() AND status <> 'awaiting_approval'`
      : `SELECT ceil(extract(epoch FROM min(greatest(coalesce(run_after, '-infinity'), coalesce(lease_expires_at, '-infinity'))) - now()) * 1000)::float8 AS ms
         FROM turnkit_turns WHERE runnable AND (run_after > now() OR lease_expires_at > now())`,
  );
  const ms = row?.ms;
  return ms === null || ms === undefined ? null : Math.max(0, Number(ms));
}
