// The lease API a worker uses: claim a runnable turn with a fenced lease, renew it, write
// checkpoints (one compare-and-swap each), and journal tool calls. Every write checks the token.

import type { ToolResult } from '@turnkit/core';
import { TERMINAL } from './columns.js';
import { ConflictError, LeaseLostError } from './errors.js';
import { CHANNEL_SQL } from './notify.js';
import type { Sql, SqlQuery } from './sql.js';
import type { Commit, Lease, StoredStatus } from './types.js';

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

/** The status a commit leaves, and the log rows it appends (messages, notices, a status change). */
function logRows(lease: Lease, commit: Commit): { status: StoredStatus; rows: { kind: string; data: unknown }[] } {
  const status: StoredStatus = commit.fail !== undefined ? 'failed' : (commit.state?.status ?? lease.status);
  const rows: { kind: string; data: unknown }[] = [
    ...(commit.messages ?? []).map((m) => ({ kind: 'message', data: m })),
    ...(commit.notices ?? []).map((n) => ({ kind: 'notice', data: n })),
  ];
  if (status !== lease.status) {
    const outcome = commit.fail !== undefined ? { status: 'failed', error: commit.fail } : (commit.state?.outcome ?? null);
    rows.push({ kind: 'status', data: { status, outcome } });
  }
  return { status, rows };
}

/** The compare-and-swap itself: the turn row moves to the next version, or the right error is thrown. */
async function swapTurn(
  tx: SqlQuery,
  lease: Lease,
  commit: Commit,
  status: StoredStatus,
  appended: number,
): Promise<{ version: number; logSeq: number }> {
  const json = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));
  const [row] = await tx.query(
    `UPDATE turnkit_turns SET
       state = coalesce($4::jsonb, state), status = $5, error = coalesce($6::jsonb, error),
       grants = coalesce($7::jsonb, grants), budget_usage = coalesce($8::jsonb, budget_usage),
       version = version + 1, log_seq = log_seq + $9, updated_at = now(),
       ended_at = CASE WHEN $10 THEN now() ELSE ended_at END,
       runnable = CASE WHEN $10 THEN false ELSE runnable END,
       lease_owner = CASE WHEN $11 OR $10 THEN NULL ELSE lease_owner END,
       lease_expires_at = CASE WHEN $11 OR $10 THEN NULL ELSE lease_expires_at END,
       run_after = CASE WHEN $12::int IS NULL THEN run_after ELSE now() + $12::int * interval '1 millisecond' END,
       trace_context = coalesce($13::jsonb, trace_context)
     WHERE id = $1 AND lease_token = $2 AND version = $3
     RETURNING version, log_seq`,
    [
      lease.id,
      lease.token,
      lease.version,
      json(commit.state),
      status,
      json(commit.fail),
      json(commit.grants),
      json(commit.budgetUsage),
      appended,
      TERMINAL.has(status),
      commit.release === true,
      commit.retryAfterMs ?? null,
      commit.traceContext ?? null,
    ],
  );
  if (row !== undefined) return { version: Number(row.version), logSeq: Number(row.log_seq) };
  const [current] = await tx.query('SELECT lease_token FROM turnkit_turns WHERE id = $1', [lease.id]);
  throw current !== undefined && Number(current.lease_token) === lease.token
    ? new ConflictError(lease.id)
    : new LeaseLostError(lease.id);
}

async function appendLog(tx: SqlQuery, lease: Lease, first: number, rows: readonly unknown[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO turnkit_log (turn_id, seq, kind, data, lease_token)
     SELECT $1, $2::int + (r.ordinality - 1)::int, r.value ->> 'kind', r.value -> 'data', $4 FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS r`,
    [lease.id, first, JSON.stringify(rows), lease.token],
  );
}

/** Inbox rows the state includes become `applied`; on the end, what is left is `ignored`; on release, runnable is set. */
async function settleInbox(tx: SqlQuery, lease: Lease, commit: Commit, status: StoredStatus): Promise<void> {
  const applied = commit.applied ?? [];
  if (applied.length > 0) {
    await tx.query(
      `UPDATE turnkit_inbox SET status = 'applied', applied_at = now() WHERE turn_id = $1 AND status = 'pending' AND id = ANY($2::bigint[])`,
      [lease.id, applied],
    );
  }
  if (TERMINAL.has(status)) {
    // What arrived too late to matter (a decision or cancel for a turn that ended) is closed, not lost.
    await tx.query(`UPDATE turnkit_inbox SET status = 'ignored', applied_at = now() WHERE turn_id = $1 AND status = 'pending'`, [
      lease.id,
    ]);
  } else if (commit.release === true) {
    // Runnable again only with something to do: a decision or cancel waiting, or a state in flight.
    // Workers hear of it at once (unless it waits for a retry: they wake for that when it is due).
    await tx.query(
      `WITH t AS (UPDATE turnkit_turns SET runnable = ($2 OR EXISTS (SELECT 1 FROM turnkit_inbox WHERE turn_id = $1 AND status = 'pending'))
                  WHERE id = $1 RETURNING runnable, run_after)
       SELECT pg_notify(${CHANNEL_SQL}, $1) FROM t WHERE t.runnable AND t.run_after IS NULL`,
      [lease.id, status !== 'awaiting_approval'],
    );
  }
}

/** One checkpoint: state, log rows and applied inbox rows in one transaction, fenced and compare-and-swapped. */
export async function commitTurn(sql: Sql, lease: Lease, commit: Commit): Promise<void> {
  if (commit.retryAfterMs !== undefined) checkLeaseMs(commit.retryAfterMs, 'retryAfterMs');
  const { status, rows } = logRows(lease, commit);
  const version = await sql.transaction(async (tx) => {
    const swapped = await swapTurn(tx, lease, commit, status, rows.length);
    await appendLog(tx, lease, swapped.logSeq - rows.length + 1, rows);
    await settleInbox(tx, lease, commit, status);
    return swapped.version;
  });
  lease.version = version;
  lease.status = status;
}

/** Runs a fenced write: the turn's row is locked and its token checked first. */
function fenced<T>(sql: Sql, lease: Lease, work: (tx: SqlQuery) => Promise<T>): Promise<T> {
  return sql.transaction(async (tx) => {
    const [row] = await tx.query('SELECT lease_token FROM turnkit_turns WHERE id = $1 FOR UPDATE', [lease.id]);
    if (row === undefined || Number(row.lease_token) !== lease.token) throw new LeaseLostError(lease.id);
    return work(tx);
  });
}

export async function readJournal(
  db: SqlQuery,
  lease: Lease,
  callIds: readonly string[],
): Promise<{ results: ToolResult[]; started: string[] }> {
  const rows = await db.query(
    `SELECT call_id, result FROM turnkit_tool_results WHERE turn_id = $1 AND call_id = ANY($2::text[])`,
    [lease.id, [...callIds]],
  );
  const results: ToolResult[] = [];
  const started: string[] = [];
  for (const r of rows) {
    if (r.result !== null && r.result !== undefined) results.push(r.result as ToolResult);
    else started.push(String(r.call_id));
  }
  return { results, started };
}

export async function journalStart(sql: Sql, lease: Lease, call: { readonly id: string; readonly name: string }): Promise<void> {
  await fenced(sql, lease, (tx) =>
    tx.query(
      `INSERT INTO turnkit_tool_results (turn_id, call_id, name, started_at, started_token) VALUES ($1, $2, $3, now(), $4)
       ON CONFLICT (turn_id, call_id) DO UPDATE SET started_at = now(), started_token = $4 WHERE turnkit_tool_results.result IS NULL`,
      [lease.id, call.id, call.name, lease.token],
    ),
  );
}

export async function journalResult(sql: Sql, lease: Lease, result: ToolResult): Promise<boolean> {
  const rows = await fenced(sql, lease, (tx) =>
    tx.query(
      `INSERT INTO turnkit_tool_results (turn_id, call_id, name, result, finished_at) VALUES ($1, $2, $3, $4::jsonb, now())
       ON CONFLICT (turn_id, call_id) DO UPDATE SET result = EXCLUDED.result, finished_at = now() WHERE turnkit_tool_results.result IS NULL
       RETURNING call_id`,
      [lease.id, result.callId, result.name, JSON.stringify(result)],
    ),
  );
  return rows.length > 0;
}
