// Reading the tool journal of some calls: results written, and calls started without a result.

import type { SqlQuery } from '../db/types.js';
import type { JournalRead, Lease } from '../types.js';
import { toJournalRead } from './values.js';

export async function readJournal(db: SqlQuery, lease: Lease, callIds: readonly string[]): Promise<JournalRead> {
  const rows = await db.query(
    `SELECT call_id, name, result FROM turnkit_tool_results WHERE turn_seq = (SELECT seq FROM turnkit_turns WHERE id = $1) AND call_id = ANY($2::text[])`,
    [lease.id, [...callIds]],
  );
  return toJournalRead(rows);
}
