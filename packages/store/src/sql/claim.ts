// Claiming work: one statement takes the oldest runnable turns up to a worker's free capacity
// (FOR UPDATE SKIP LOCKED, so workers never wait on each other or take the same turn), bumps each
// fencing token and sets the lease. A cap per agent is counted across every worker on the database.

import type { Message, TurnLimitsInput } from '@turnkit/core';
import type { Grant } from '@turnkit/dispatch';
import type { BudgetUsage } from '@turnkit/dispatch/internal';
import type { Row, Sql, SqlQuery } from '../db/types.js';
import type { Claim, ClaimManyOptions, StoredStatus } from '../types.js';
import { contextOf, readThreadContext } from './thread-context.js';
import { checkLeaseMs, restoredBudgetUsage, restoredState, toPending } from './values.js';

// Any constant: the key of the advisory lock that makes capped claims take turns (see claimTurns).
const CAP_LOCK = 7_316_420_912;

/**
 * A turn is runnable now: marked runnable, its lease free or expired, its retry due, and no earlier
 * turn of its thread still open (a thread runs one turn at a time, in the order they were submitted;
 * a turn that has ended never opens again, so a snapshot that predates an end only waits longer).
 */
const RUNNABLE_NOW = `runnable AND (lease_expires_at IS NULL OR lease_expires_at <= now()) AND (run_after IS NULL OR run_after <= now())
  AND (thread IS NULL OR NOT EXISTS (SELECT 1 FROM turnkit_turns e
    WHERE e.thread = turnkit_turns.thread AND e.seq < turnkit_turns.seq AND e.ended_at IS NULL))`;

// The claimed turns come back with their transcripts and pending inbox rows, read in the same
// statement. Its snapshot can predate a checkpoint the previous holder committed just before the
// row was locked (its lease had expired): then the log holds fewer rows than the turn's `log_seq`
// says, and the transcript is read again (see claimTurns).
// $1 owner, $2 leaseMs, $3 how many, $4 caps as {"agent": cap}, $5 the only turn ids to take (or null). `room` is what each capped agent
// may still start (its cap minus the turns held under a live lease); an agent with no room is not
// picked at all, so its turns never crowd out others'; within one claim, `n <= room` trims the rest.
// A held turn is runnable (only a write that gives the lease back makes a turn not runnable), so
// the count reads the runnable turns (their index), not every turn the store ever ran.
const CLAIM_SQL = `
WITH caps AS (SELECT key AS agent, value::int AS cap FROM jsonb_each_text($4::jsonb)),
room AS (
  SELECT c.agent, c.cap - (SELECT count(*) FROM turnkit_turns h
                           WHERE h.runnable AND h.agent = c.agent AND h.lease_owner IS NOT NULL AND h.lease_expires_at > now())::int AS room
  FROM caps c
),
picked AS (
  SELECT id, agent, seq FROM turnkit_turns
  WHERE ${RUNNABLE_NOW} AND agent NOT IN (SELECT agent FROM room WHERE room <= 0) AND ($5::text[] IS NULL OR id = ANY($5::text[]))
  ORDER BY seq LIMIT $3 FOR UPDATE SKIP LOCKED
),
ranked AS (
  SELECT p.id, p.seq, row_number() OVER (PARTITION BY p.agent ORDER BY p.seq) AS n, r.room
  FROM picked p LEFT JOIN room r ON r.agent = p.agent
),
claimed AS (
  UPDATE turnkit_turns AS t SET lease_owner = $1, lease_token = t.lease_token + 1,
    lease_expires_at = now() + $2::int * interval '1 millisecond', run_after = NULL, updated_at = now()
  FROM ranked WHERE t.id = ranked.id AND (ranked.room IS NULL OR ranked.n <= ranked.room)
  RETURNING t.id, t.seq, t.thread, t.agent, t.input, t.limits, t.state, t.state_limits, t.grants, t.budget_usage, t.lease_token, t.version, t.status, t.log_seq, t.trace_context
)
SELECT c.*, floor(extract(epoch FROM now()) * 1000)::float8 AS db_now,
  (SELECT coalesce(max(l.seq), 0) FROM turnkit_log_entries l WHERE l.turn_id = c.id) AS logged,
  CASE WHEN c.thread IS NULL THEN (SELECT coalesce(json_agg(json_build_object('kind', l.kind, 'data', l.data) ORDER BY l.seq), '[]')
    FROM turnkit_log_entries l WHERE l.turn_id = c.id AND l.kind IN ('message', 'compaction')) END AS transcript,
  (SELECT th.grants FROM turnkit_threads th WHERE th.id = c.thread) AS thread_grants,
  (SELECT coalesce(json_agg(json_build_object('id', i.id::text, 'kind', i.kind, 'call_id', i.call_id, 'body', i.body) ORDER BY i.id), '[]')
   FROM turnkit_inbox i WHERE i.turn_id = c.id AND i.status = 'pending') AS pending
FROM claimed c`;

function checkCaps(caps: Readonly<Record<string, number>>): string {
  for (const [agent, cap] of Object.entries(caps)) {
    if (typeof cap !== 'number' || !Number.isInteger(cap) || cap < 1)
      throw new RangeError(`The cap of agent '${agent}' must be a whole number >= 1, got ${String(cap)}.`);
  }
  return JSON.stringify(caps);
}

/**
 * Claims up to `limit` runnable turns, oldest first, in one statement. With caps, claims of every
 * worker take turns on an advisory lock, so the count of held turns a claim sees is never stale.
 */
export async function claimTurns(sql: Sql, options: ClaimManyOptions): Promise<Claim[]> {
  const { owner, leaseMs, limit } = options;
  checkLeaseMs(leaseMs);
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`claim limit must be a whole number >= 1, got ${String(limit)}.`);
  const caps = checkCaps(options.caps ?? {});
  const turnIds = options.turnIds === undefined ? null : [...options.turnIds];
  const params = [owner, leaseMs, limit, caps, turnIds];
  const rows =
    caps === '{}'
      ? await sql.query(CLAIM_SQL, params)
      : await sql.transaction(async (tx) => {
          await tx.query('SELECT pg_advisory_xact_lock($1)', [CAP_LOCK]);
          return tx.query(CLAIM_SQL, params);
        });
  if (rows.length === 0) return [];
  rows.sort((a, b) => Number(a.seq) - Number(b.seq));
  const stale = rows.filter((r) => r.thread === null && Number(r.logged) !== Number(r.log_seq)).map((r) => String(r.id));
  const reread = stale.length === 0 ? new Map<string, Message[]>() : await readTranscripts(sql, stale);
  // A turn of a thread goes on from its thread's context, read after the claim (so never stale).
  for (const row of rows)
    if (row.thread !== null) reread.set(String(row.id), await readThreadContext(sql, String(row.thread), Number(row.seq)));
  return rows.map((row): Claim => {
    const id = String(row.id);
    return {
      lease: { id, owner, token: Number(row.lease_token), version: Number(row.version), status: row.status as StoredStatus },
      agent: String(row.agent),
      input: (row.input ?? null) as string | null,
      limits: (row.limits ?? null) as TurnLimitsInput | null,
      state: restoredState(row.id, row.state, row.state_limits),
      // A turn of a thread has what its thread remembered too.
      grants: [...((row.thread_grants ?? []) as Grant[]), ...((row.grants ?? []) as Grant[])],
      thread: (row.thread ?? null) as string | null,
      budgetUsage: (restoredBudgetUsage(row.budget_usage) ?? null) as BudgetUsage | null,
      // The messages, each compaction replacing what came before it with what it kept.
      transcript: reread.get(id) ?? contextOf((row.transcript ?? []) as Row[]),
      pending: ((row.pending ?? []) as Row[]).map(toPending),
      traceContext: row.trace_context ?? null,
      now: Number(row.db_now),
    };
  });
}

async function readTranscripts(db: SqlQuery, ids: readonly string[]): Promise<Map<string, Message[]>> {
  const rows = await db.query(
    `SELECT turn_id, kind, data FROM turnkit_log_entries WHERE turn_id = ANY($1::text[]) AND kind IN ('message', 'compaction') ORDER BY turn_id, seq`,
    [[...ids]],
  );
  const byTurn = new Map<string, Row[]>();
  for (const r of rows) {
    const id = String(r.turn_id);
    byTurn.set(id, [...(byTurn.get(id) ?? []), r]);
  }
  return new Map([...byTurn].map(([id, entries]) => [id, contextOf(entries)]));
}
