// The tool journal: a call is journaled as started before its tool runs, and its result the moment
// it finishes. Each write is one statement that checks the lease's token itself (no transaction, no
// separate lock and check).

import type { ToolResult } from '@turnkit/core';
import { LeaseLostError } from './errors.js';
import type { Row, SqlQuery } from './sql.js';
import type { Lease } from './types.js';

/** What the journal knows of some calls: results written, and calls started without a result. */
export interface JournalRead {
  readonly results: ToolResult[];
  readonly started: string[];
}

/** Reads journal rows (`call_id`, `result`) into results and started calls. */
export function toJournalRead(rows: readonly Row[]): JournalRead {
  const results: ToolResult[] = [];
  const started: string[] = [];
  for (const r of rows) {
    if (r.result !== null && r.result !== undefined) results.push(r.result as ToolResult);
    else started.push(String(r.call_id));
  }
  return { results, started };
}

export async function readJournal(db: SqlQuery, lease: Lease, callIds: readonly string[]): Promise<JournalRead> {
  const rows = await db.query(
    `SELECT call_id, result FROM turnkit_tool_results WHERE turn_id = $1 AND call_id = ANY($2::text[])`,
    [lease.id, [...callIds]],
  );
  return toJournalRead(rows);
}

/**
 * A fenced journal write in one statement: `held` locks the turn's row (FOR KEY SHARE) only while
 * the lease's token is current, and the write takes its turn id from `held`, so it happens only
 * then. A claim takes the row FOR UPDATE: it skips a row this write holds, or this write waits for
 * the claim and then finds the token moved. So once a claim commits, every write of the previous
 * holder has committed before it or been refused, and the new holder's journal read sees it.
 * Returns whether a row was written; throws LeaseLostError when the token moved.
 */
async function fencedWrite(db: SqlQuery, lease: Lease, write: string, params: readonly unknown[]): Promise<boolean> {
  const [row] = await db.query(
    `WITH held AS (SELECT id FROM turnkit_turns WHERE id = $1 AND lease_token = $2::int FOR KEY SHARE),
     written AS (${write})
     SELECT (SELECT count(*) FROM held)::int AS held, (SELECT count(*) FROM written)::int AS written`,
    [lease.id, lease.token, ...params],
  );
  if (Number(row?.held ?? 0) === 0) throw new LeaseLostError(lease.id);
  return Number(row?.written ?? 0) > 0;
}

/** Journals that a call is about to run; a call with a result keeps it. Fenced. */
export async function journalStart(
  db: SqlQuery,
  lease: Lease,
  call: { readonly id: string; readonly name: string },
): Promise<void> {
  await fencedWrite(
    db,
    lease,
    `INSERT INTO turnkit_tool_results (turn_id, call_id, name, started_at, started_token)
     SELECT id, $3::text, $4::text, now(), $2::int FROM held
     ON CONFLICT (turn_id, call_id) DO UPDATE SET started_at = now(), started_token = EXCLUDED.started_token
       WHERE turnkit_tool_results.result IS NULL
     RETURNING call_id`,
    [call.id, call.name],
  );
}

/** Journals a call's result; the first result per call wins (false for a later one). Fenced. */
export async function journalResult(db: SqlQuery, lease: Lease, result: ToolResult): Promise<boolean> {
  return fencedWrite(
    db,
    lease,
    `INSERT INTO turnkit_tool_results (turn_id, call_id, name, result, finished_at)
     SELECT id, $3::text, $4::text, $5::jsonb, now() FROM held
     ON CONFLICT (turn_id, call_id) DO UPDATE SET result = EXCLUDED.result, finished_at = now()
       WHERE turnkit_tool_results.result IS NULL
     RETURNING call_id`,
    [result.callId, result.name, JSON.stringify(result)],
  );
}
