// Journaling a call: its start before its tool runs, and its result the moment it finishes. Each
// write is one statement that checks the lease's token itself (no transaction, no separate lock
// and check).

import type { ToolResult } from '@turnkit/core';
import type { SqlQuery } from '../db/types.js';
import { LeaseLostError } from '../errors.js';
import type { Lease } from '../types.js';

/**
 * A result as its journal row keeps it: without the `callId` and `name` the row has; a plain text
 * output that is not an error ({ output: string, isError: false }, nothing else) as that text alone,
 * a JSON string (migration 10: `rowResult` and turnkit_journal_result read it back whole).
 */
function storedResult(result: ToolResult): { lean: string; full: string } {
  const { callId: _callId, name: _name, ...rest } = result;
  const keys = Object.keys(rest);
  const plain = keys.length === 2 && rest.isError === false && typeof rest.output === 'string' && 'output' in rest;
  return { lean: JSON.stringify(plain ? rest.output : rest), full: JSON.stringify(result) };
}

/**
 * A fenced journal write in one statement: `held` locks the turn's row (FOR KEY SHARE) only while
 * the lease's token is current, and the write takes its turn's `seq` from `held`, so it happens only
 * then. A claim takes the row FOR UPDATE: it skips a row this write holds, or this write waits for
 * the claim and then finds the token moved. So once a claim commits, every write of the previous
 * holder has committed before it or been refused, and the new holder's journal read sees it.
 *
 * The call's row is updated when it exists (`set`, only while it has no result) and inserted when
 * it does not (`columns` and `values` over $1 the turn, $2 the token, $3 the call id, $4 the name,
 * then `params`): no `ON CONFLICT`, whose speculative insert and row lock cost write-ahead log on
 * every write. Only the holder writes the turn's journal (the lock above), so the row cannot appear
 * between the look and the insert. Returns whether a row was written; throws LeaseLostError when
 * the token moved.
 */
async function fencedWrite(
  db: SqlQuery,
  lease: Lease,
  call: { readonly id: string; readonly name: string },
  write: { readonly set: string; readonly columns: string; readonly values: string },
  params: readonly unknown[],
): Promise<boolean> {
  const [row] = await db.query(
    `WITH held AS (SELECT seq FROM turnkit_turns WHERE id = $1 AND lease_token = $2::int FOR KEY SHARE),
     updated AS (UPDATE turnkit_tool_results SET ${write.set}
       WHERE turn_seq = (SELECT seq FROM held) AND call_id = $3::text AND result IS NULL RETURNING call_id),
     inserted AS (INSERT INTO turnkit_tool_results (turn_seq, call_id, name, ${write.columns})
       SELECT seq, $3::text, $4::text, ${write.values} FROM held
       WHERE NOT EXISTS (SELECT 1 FROM turnkit_tool_results j WHERE j.turn_seq = held.seq AND j.call_id = $3::text) RETURNING call_id)
     SELECT (SELECT count(*) FROM held)::int AS held,
       ((SELECT count(*) FROM updated) + (SELECT count(*) FROM inserted))::int AS written`,
    [lease.id, lease.token, call.id, call.name, ...params],
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
    call,
    // A row that carries log entries keeps its start's time and token: they are the entries' (migration 10).
    {
      set: 'started_at = CASE WHEN log IS NULL THEN now() ELSE started_at END, started_token = CASE WHEN log IS NULL THEN $2::int ELSE started_token END',
      columns: 'started_at, started_token',
      values: 'now(), $2::int',
    },
    [],
  );
}

/** Journals a call's result; the first result per call wins (false for a later one). Fenced. */
export async function journalResult(db: SqlQuery, lease: Lease, result: ToolResult): Promise<boolean> {
  const stored = storedResult(result);
  return fencedWrite(
    db,
    lease,
    { id: result.callId, name: result.name },
    {
      // The row's name is the call's (from its start) or this result's (inserted here): the result keeps a name that differs.
      set: 'result = CASE WHEN name = $4::text THEN $5::json ELSE $6::json END, finished_at = now()',
      columns: 'result, finished_at',
      values: '$5::json, now()',
    },
    [stored.lean, stored.full],
  );
}
