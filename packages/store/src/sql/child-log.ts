// A turn of many agents: its child turns' log entries (kind 'child', docs/agents.md), in order. The
// worker reads them when it claims a tree with a child running, to give that child its transcript.

import type { SqlQuery } from '../db/types.js';
import type { ChildLogEntry } from '../types.js';

/** The `child` log entries of turn `id`, in order. */
export async function readChildLog(db: SqlQuery, id: string): Promise<ChildLogEntry[]> {
  const rows = await db.query(`SELECT data FROM turnkit_log_entries WHERE turn_id = $1 AND kind = 'child' ORDER BY seq`, [id]);
  return rows.map((r) => r.data as ChildLogEntry);
}
