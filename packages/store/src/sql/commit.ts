// Checkpoints: the turn's state, the log rows since the last one, and the inbox rows the state
// includes, written as one compare-and-swap under the lease's token. Normally one statement; when
// the turn's row changed after that statement's snapshot was taken (a decision, a cancel or a lease
// renewal committed meanwhile), nothing is written and the checkpoint is made again as a
// transaction of statements that each see the latest rows.

import { CHANNEL_SQL } from '../db/notify.js';
import type { Row, Sql, SqlQuery } from '../db/types.js';
import { ConflictError, LeaseLostError } from '../errors.js';
import { storedStatusOf, TERMINAL } from '../statuses.js';
import type { Message, Notice } from '@turnkit/core';
import type { Commit, JournalRead, Lease, StoredStatus } from '../types.js';
import { checkLeaseMs, storedBudgetUsage, storedState, toJournalRead } from './values.js';

/**
 * A log entry as an 'entries' row keeps it, its kind's letter first (turnkit_log_entries spells the
 * kind out and reads each back whole): a message ['m', message] (`appendLog` may make it a 'u' or an
 * 'r'; a model's reply is ['a', content(, toolCalls)]: `messageEntry`), a compaction ['c', kept], a
 * notice ['n', name, data] (['n', notice] when it is not a plain { name, data }; ['t'] for the
 * turn's `turn_started`, whose data is the turn's id; ['i', iteration] and ['g', round] for the
 * round's `iteration` and `steering`), a status change ['s', status] or ['s', status, outcome]. A child turn's entry (docs/agents.md) is an object,
 * { kind: 'child', data }, which turnkit_log_entries reads as kind 'child'.
 */
type Entry = readonly unknown[] | { readonly kind: 'child'; readonly data: unknown };

/** A notice as an entry: the shortest form turnkit_log_entries reads back as the same notice. */
function noticeEntry(turnId: string, notice: Notice): Entry {
  const keys = Object.keys(notice);
  const plain = keys.length === 2 && keys[0] === 'name' && keys[1] === 'data' && notice.data !== undefined;
  if (!plain || typeof notice.name !== 'string') return ['n', notice];
  const data = notice.data as unknown;
  if (notice.name === 'turn_started' && isObj(data) && Object.keys(data).length === 1 && data.id === turnId) return ['t'];
  // The two notices of every round: { name: 'iteration', data: { iteration } } and { name: 'steering', data: { round } }.
  const only = isObj(data) && Object.keys(data).length === 1 ? Object.keys(data)[0] : undefined;
  if (notice.name === 'iteration' && only === 'iteration') return ['i', (data as Record<string, unknown>).iteration];
  if (notice.name === 'steering' && only === 'round') return ['g', (data as Record<string, unknown>).round];
  return ['n', notice.name, data];
}

/**
 * A message as an entry: a model's reply { role: 'assistant', content } or { role: 'assistant',
 * content, toolCalls } (those keys only, in that order) as ['a', content(, toolCalls)], or
 * ['a', toolCalls] when its content is empty; any other
 * as ['m', message] (`appendLog` may make it a 'u' or an 'r').
 */
function messageEntry(message: Message): Entry {
  const keys = Object.keys(message);
  if (message.role !== 'assistant' || keys[0] !== 'role' || keys[1] !== 'content' || typeof message.content !== 'string')
    return ['m', message];
  if (keys.length === 2) return ['a', message.content];
  if (keys.length === 3 && keys[2] === 'toolCalls' && Array.isArray(message.toolCalls))
    // Calls without text (migration 10): the view reads ['a', toolCalls] back with an empty content.
    return message.content === '' ? ['a', message.toolCalls] : ['a', message.content, message.toolCalls];
  return ['m', message];
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The status a commit leaves, and the log entries it appends (messages, notices, a status change). */
function logRows(lease: Lease, commit: Commit): { status: StoredStatus; rows: Entry[] } {
  const status: StoredStatus =
    commit.fail !== undefined ? 'failed' : commit.state === undefined ? lease.status : storedStatusOf(commit.state);
  const rows: Entry[] = [];
  // The status the log last showed: a status the commit passed through is logged once, in order.
  let shown = lease.status;
  if (commit.log !== undefined)
    for (const item of commit.log) {
      if ('status' in item) {
        if (item.status !== shown) rows.push(['s', item.status]);
        shown = item.status;
        continue;
      }
      rows.push(
        'message' in item
          ? messageEntry(item.message)
          : 'notice' in item
            ? noticeEntry(lease.id, item.notice)
            : 'child' in item
              ? // A child turn's entry (docs/agents.md): an object entry, which turnkit_log_entries reads as kind 'child'.
                { kind: 'child', data: item.child }
              : ['c', item.compaction],
      );
    }
  else {
    for (const m of commit.messages ?? []) rows.push(messageEntry(m));
    for (const n of commit.notices ?? []) rows.push(noticeEntry(lease.id, n));
  }
  if (status !== shown) {
    const outcome = commit.fail !== undefined ? { status: 'failed', error: commit.fail } : (commit.state?.outcome ?? null);
    rows.push(outcome === null ? ['s', status] : ['s', status, outcome]);
  }
  return { status, rows };
}

/**
 * The entries as the journal row of `start` carries them (migration 11): the model's reply whose
 * only call is `start` (its keys id, name, input, in that order) as ['b', input] or ['b', input,
 * content] (content '' left out); turnkit_log_entries reads it back whole, the id and name from the
 * row. Any other entry as it is.
 */
function carriedRows(rows: readonly Entry[], start: { readonly id: string; readonly name: string }): Entry[] {
  return rows.map((entry) => {
    if (!Array.isArray(entry) || entry[0] !== 'a' || entry.length < 2) return entry;
    const calls = entry.at(-1) as unknown;
    if (!Array.isArray(calls) || calls.length !== 1) return entry;
    const call = calls[0] as unknown;
    if (!isObj(call) || call.id !== start.id || call.name !== start.name || !Object.hasOwn(call, 'input')) return entry;
    const keys = Object.keys(call);
    if (keys.length !== 3 || keys[0] !== 'id' || keys[1] !== 'name' || keys[2] !== 'input') return entry;
    if (entry.length === 2) return ['b', call.input];
    return entry.length === 3 && typeof entry[1] === 'string' ? ['b', call.input, entry[1]] : entry;
  });
}

const json = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));

// $1 id, $2 token, $3 version, $4 state, $5 status, $6 fail, $7 grants, $8 budget usage, $9 log rows
// appended, $10 terminal, $11 release, $12 retry after ms, $13 the log rows, $14 the state's limits,
// $15 the observer's trace context, $16 inbox ids applied, $17 call ids whose journal to read (the
// batch this checkpoint starts), or null, $18 the inbox ids of $16 that core did not take (the worker's `ignored`: marked ignored),
// $19 the thread's grants (a turn of a thread, when they changed), $20 whether the log rows hold a compaction,
// $21 the call whose start this checkpoint journals (or null), $22 its tool's name, $23 the log rows as
// that call's journal row carries them (`carriedRows`), or null.
const SET_TURN = `
  state = coalesce($4::json, state), state_limits = coalesce($14::json, state_limits), status = $5::text, error = coalesce($6::jsonb, error),
  grants = coalesce($7::json, grants), budget_usage = coalesce($8::json, budget_usage),
  version = version + 1, log_seq = log_seq + $9::int, updated_at = now(),
  ended_at = CASE WHEN $10::bool THEN now() ELSE ended_at END,
  lease_owner = CASE WHEN $11::bool OR $10::bool THEN NULL ELSE lease_owner END,
  lease_expires_at = CASE WHEN $11::bool OR $10::bool THEN NULL ELSE lease_expires_at END,
  run_after = CASE WHEN $12::int IS NULL THEN run_after ELSE now() + $12::int * interval '1 millisecond' END,
  trace_context = coalesce($15::jsonb, trace_context)`;

/**
 * Runnable after a release only with something to do: a state in flight, a decision or cancel
 * waiting, or a time to wake at (`wake`: a parked turn whose approval expires then; `run_after`
 * holds the time) (SQL, over the parameters named).
 */
const runnable = (p: { id: string; status: string; terminal: string; release: string; applied: string; wake: string }): string =>
  `runnable = CASE WHEN ${p.terminal}::bool THEN false
  WHEN ${p.release}::bool THEN (${p.status}::text <> 'awaiting_approval' OR ${p.wake} OR EXISTS (SELECT 1 FROM turnkit_inbox
    WHERE turn_id = ${p.id} AND status = 'pending' AND NOT (id = ANY(${p.applied}::bigint[]))))
  ELSE runnable END`;

/**
 * The log entries since the last checkpoint, as one row (see turnkit_log_entries for them one by
 * one). The user message equal to the turn's input is kept as ["u"], and a tool result message
 * equal to the result its call's journal row holds as ["r", callId]: the input is stored once, in
 * the turn's row, the output once, in the journal, and the view reads the message back from there
 * (migration 7). Equal means equal as jsonb to the message the view gives back, so a message that
 * differs in anything (a result core changed, another key) is kept whole.
 */
/**
 * The entries since the last checkpoint ($13) as one JSON array, without blanks between its items
 * (json_agg would put one after each comma): the user message equal to the turn's input as ["u"],
 * a tool result message equal to its journal row's result as ["r", callId] (see `appendLog`).
 * Only an entry whose text starts as the worker writes such a message (`["m",{"role":"user",` or
 * `["m",{"role":"tool",`, JSON.stringify's form of core's messages) is read as JSON, once (`c.ej`);
 * any other entry is kept as its text, unparsed. A message written otherwise is kept whole, which
 * the view reads back the same. Reading each entry's JSON text again for each test cost about a
 * quarter of a millisecond of Postgres time per checkpoint of the bench scenario, half of it
 * (`pnpm bench --durable`, one worker process: Postgres CPU 4.1 ms a turn before, 3.0–3.3 after).
 */
const entries = (param: string): string => `(SELECT ('[' || string_agg((CASE
       WHEN c.ej #>> '{1,role}' = 'user' AND t.input IS NOT NULL
         AND c.ej -> 1 = jsonb_build_object('role', 'user', 'content', t.input) THEN '["u"]'
       WHEN c.ej #>> '{1,role}' = 'tool' AND EXISTS (SELECT 1 FROM turnkit_tool_results j
         WHERE j.turn_seq = t.seq AND j.call_id = c.ej #>> '{1,result,callId}'
           AND c.ej -> 1 = jsonb_build_object('role', 'tool', 'result', turnkit_journal_result(j.call_id, j.name, j.result)::jsonb))
       THEN '["r",' || to_json(c.ej #>> '{1,result,callId}')::text || ']' ELSE e.value::text END), ',' ORDER BY e.n) || ']')::json
     FROM json_array_elements(${param}::json) WITH ORDINALITY AS e(value, n)
     CROSS JOIN LATERAL (SELECT CASE WHEN left(e.value::text, 20) IN ('["m",{"role":"user",', '["m",{"role":"tool",')
       THEN e.value::jsonb END AS ej) c)`;
const ENTRIES = entries('$13');

/**
 * The log entries since the last checkpoint, as one row (see turnkit_log_entries for them one by
 * one), unless the call's start written with the checkpoint (`start`, the CTE of START_SQL's
 * insert) carries them. The user message equal to the turn's input is kept as ["u"], and a tool
 * result message equal to the result its call's journal row holds as ["r", callId]: the input is
 * stored once, in the turn's row, the output once, in the journal, and the view reads the message
 * back from there (migration 7). Equal means equal as jsonb to the message the view gives back, so
 * a message that differs in anything (a result core changed, another key) is kept whole.
 */
const appendLog = (start: string | null): string => `INSERT INTO turnkit_log (turn_seq, seq, kind, data, lease_token)
  SELECT t.seq, t.log_seq - $9::int + 1, 'entries', ${ENTRIES}, $2::int FROM t
  WHERE $9::int > 0${start === null ? '' : ` AND NOT EXISTS (SELECT 1 FROM ${start})`}`;

/**
 * A call journaled as started with the checkpoint (over `t`, the turn's updated row, so only when
 * the checkpoint is written): its row is inserted, or a row without a result marked started, as
 * journal-call.ts's start does; $2 the token, $21 the call, $22 its tool's name. The turn's row is
 * locked by the checkpoint's update, so no other write of the journal comes between.
 */
const START_SQL = {
  update: `UPDATE turnkit_tool_results SET started_at = now(), started_token = $2::int
    WHERE turn_seq = (SELECT seq FROM t) AND call_id = $21::text AND result IS NULL AND log IS NULL`,
  insert: `INSERT INTO turnkit_tool_results (turn_seq, call_id, name, started_at, started_token)
    SELECT t.seq, $21::text, $22::text, now(), $2::int FROM t
    WHERE $21::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM turnkit_tool_results j WHERE j.turn_seq = t.seq AND j.call_id = $21::text)`,
  /**
   * The insert that also carries the checkpoint's log entries (migration 10): the call's new row
   * keeps them with their first seq (`log_seq`); its `started_at` and `started_token` are their
   * time and token; the reply that made the call as ["b", ...] ($23: `carriedRows`). The journal
   * row is written once per round anyway: the entries then cost no log row and no log index entry
   * of their own. Returns the row, so `appendLog` writes no log row.
   */
  carrying: `INSERT INTO turnkit_tool_results (turn_seq, call_id, name, started_at, started_token, log_seq, log)
    SELECT t.seq, $21::text, $22::text, now(), $2::int, CASE WHEN $9::int > 0 THEN t.log_seq - $9::int + 1 END,
      CASE WHEN $9::int > 0 THEN ${entries('$23')} END FROM t
    WHERE $21::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM turnkit_tool_results j WHERE j.turn_seq = t.seq AND j.call_id = $21::text)
    RETURNING call_id`,
};

/**
 * A turn of a thread (over `t`, the turn's updated row): its thread keeps the grants it remembered
 * (`grants`) and, after a compaction (`compacted`), that this turn holds the thread's latest one.
 * Nothing once the thread is closed.
 */
const threadSql = (grants: string, compacted: string): string =>
  `UPDATE turnkit_threads th SET grants = coalesce(${grants}::json, th.grants),
    context_turn = CASE WHEN ${compacted}::bool THEN t.seq ELSE th.context_turn END
  FROM t WHERE th.id = t.thread AND th.closed_at IS NULL AND (${grants}::json IS NOT NULL OR ${compacted}::bool)`;

/** A turn of a thread that ends (`terminal`) wakes workers for its thread's next turn (delivered on commit). */
const nextInThreadSql = (terminal: string): string =>
  `SELECT pg_notify(${CHANNEL_SQL}, n.id) FROM t JOIN LATERAL (
    SELECT id FROM turnkit_turns WHERE thread = t.thread AND ended_at IS NULL AND seq > t.seq ORDER BY seq LIMIT 1) n ON true
  WHERE ${terminal}::bool AND t.thread IS NOT NULL`;

/**
 * The whole checkpoint in one statement. `xmin = seen` makes it write only the row version its
 * snapshot saw: the inbox rows it settles and the runnable flag it sets are then exact (a decision
 * or cancel updates the turn's row in the transaction that adds it). A release or the end wakes
 * workers (NOTIFY, on commit) when the turn is runnable now. With $17, the journal of those calls
 * comes back too (read after this worker's claim, so it includes every earlier holder's writes).
 * With $21, the call's start is journaled in the same statement. A checkpoint commits without
 * waiting for the disk (`durability`) unless it ends the turn, releases it or carries a call's
 * start: a start is on disk before its tool runs.
 */
const CHECKPOINT_SQL = `
WITH seen AS (SELECT xmin FROM turnkit_turns WHERE id = $1),
t AS (
  UPDATE turnkit_turns SET ${SET_TURN}, ${runnable({ id: '$1', status: '$5', terminal: '$10', release: '$11', applied: '$16', wake: '$12::int IS NOT NULL' })}
  WHERE id = $1 AND lease_token = $2::int AND version = $3::int AND xmin = (SELECT xmin FROM seen)
  RETURNING seq, version, log_seq, runnable, run_after, thread, input
),
started AS (${START_SQL.update}),
start AS (${START_SQL.carrying}),
log AS (${appendLog('start')}),
thread AS (${threadSql('$19', '$20')}),
inbox AS (
  UPDATE turnkit_inbox SET status = CASE WHEN id = ANY($16::bigint[]) AND NOT id = ANY($18::bigint[]) THEN 'applied' ELSE 'ignored' END, applied_at = now()
  WHERE turn_id = $1 AND status = 'pending' AND (id = ANY($16::bigint[]) OR $10::bool) AND EXISTS (SELECT 1 FROM t)
),
durability AS (SELECT set_config('synchronous_commit', 'off', true) FROM t WHERE NOT ($10::bool OR $11::bool OR $21::text IS NOT NULL))
SELECT t.version,
  CASE WHEN $11::bool AND NOT $10::bool AND t.runnable AND t.run_after IS NULL THEN pg_notify(${CHANNEL_SQL}, $1) END AS woke,
  CASE WHEN $17::text[] IS NULL THEN NULL ELSE (SELECT coalesce(json_agg(json_build_object('call_id', j.call_id, 'name', j.name, 'result', j.result)), '[]')
    FROM turnkit_tool_results j WHERE j.turn_seq = t.seq AND j.call_id = ANY($17::text[])) END AS journal,
  (SELECT count(*) FROM durability) AS relaxed,
  (SELECT count(*) FROM (${nextInThreadSql('$10')}) n) AS next_woken
FROM t`;

function params(lease: Lease, commit: Commit, status: StoredStatus, rows: readonly unknown[]): unknown[] {
  const batch = commit.state?.batch;
  const stored = storedState(commit.state);
  return [
    lease.id,
    lease.token,
    lease.version,
    stored.state,
    status,
    json(commit.fail),
    json(commit.grants),
    json(storedBudgetUsage(commit.budgetUsage)),
    rows.length,
    TERMINAL.has(status),
    commit.release === true,
    commit.retryAfterMs ?? null,
    JSON.stringify(rows),
    // The limits ride in the state (values.ts); a row written before keeps its `state_limits` as they are.
    null,
    commit.traceContext ?? null,
    commit.applied ?? [],
    // A checkpoint that starts a call was made after its batch's journal was read: nothing to read back.
    batch === null || batch === undefined || commit.start !== undefined ? null : batch.calls.map((c) => c.id),
    commit.ignored ?? [],
    json(commit.threadGrants),
    commit.log?.some((item) => 'compaction' in item) === true,
    commit.start?.id ?? null,
    commit.start?.name ?? null,
    commit.start === undefined ? null : JSON.stringify(carriedRows(rows as Entry[], commit.start)),
  ];
}

/** The same checkpoint as statements in one transaction, each seeing the latest rows; throws when the lease or version moved. */
async function checkpointInSteps(tx: SqlQuery, lease: Lease, values: unknown[]): Promise<number> {
  const update = `UPDATE turnkit_turns SET ${SET_TURN} WHERE id = $1 AND lease_token = $2::int AND version = $3::int RETURNING seq, version, log_seq, thread, input`;
  const [row] = await tx.query(`WITH t AS (${update}), log AS (${appendLog(null)}) SELECT version FROM t`, values.slice(0, 15));
  if (row === undefined) {
    const [current] = await tx.query('SELECT lease_token FROM turnkit_turns WHERE id = $1', [lease.id]);
    throw current !== undefined && Number(current.lease_token) === lease.token
      ? new ConflictError(lease.id)
      : new LeaseLostError(lease.id);
  }
  // Sees every inbox row committed before it: a decision or cancel commits before the update above
  // locked the turn's row, or waits for this transaction and then finds the turn as written here.
  const [
    id,
    token,
    ,
    ,
    status,
    ,
    ,
    ,
    ,
    terminal,
    release,
    wakeAfterMs,
    ,
    ,
    ,
    applied,
    ,
    skipped,
    threadGrants,
    compacted,
    start,
    name,
  ] = values;
  if (start !== null)
    await tx.query(
      `WITH t AS (SELECT seq FROM turnkit_turns WHERE id = $1), started AS (${START_SQL.update.replaceAll('$21', '$3')})
       ${START_SQL.insert.replaceAll('$21', '$3').replaceAll('$22', '$4')}`,
      [id, token, start, name],
    );
  await tx.query(
    `WITH t AS (SELECT seq, thread FROM turnkit_turns WHERE id = $1), thread AS (${threadSql('$2', '$3')})
     SELECT (SELECT count(*) FROM (${nextInThreadSql('$4')}) n) AS next_woken`,
    [id, threadGrants, compacted, terminal],
  );
  await tx.query(
    `WITH inbox AS (
       UPDATE turnkit_inbox SET status = CASE WHEN id = ANY($5::bigint[]) AND NOT id = ANY($6::bigint[]) THEN 'applied' ELSE 'ignored' END, applied_at = now()
       WHERE turn_id = $1 AND status = 'pending' AND (id = ANY($5::bigint[]) OR $3::bool)),
     t AS (UPDATE turnkit_turns SET ${runnable({ id: '$1', status: '$2', terminal: '$3', release: '$4', applied: '$5', wake: '$7::bool' })}
           WHERE id = $1 AND ($3::bool OR $4::bool) RETURNING runnable, run_after)
     SELECT pg_notify(${CHANNEL_SQL}, $1) FROM t WHERE $4::bool AND NOT $3::bool AND t.runnable AND t.run_after IS NULL`,
    [id, status, terminal, release, applied, skipped, wakeAfterMs !== null],
  );
  return Number(row.version);
}

/**
 * One checkpoint, fenced and compare-and-swapped. Returns the journal of the batch the new state
 * starts, when it was read with it (the worker's next journal read is then answered without a query).
 */
export async function commitTurn(sql: Sql, lease: Lease, commit: Commit): Promise<JournalRead | null> {
  if (commit.retryAfterMs !== undefined) checkLeaseMs(commit.retryAfterMs, 'retryAfterMs');
  const { status, rows } = logRows(lease, commit);
  const values = params(lease, commit, status, rows);
  const [row] = await sql.query(CHECKPOINT_SQL, values);
  let journal: JournalRead | null = null;
  if (row !== undefined) {
    lease.version = Number(row.version);
    if (row.journal !== null && row.journal !== undefined) journal = toJournalRead(row.journal as Row[]);
  } else {
    lease.version = await sql.transaction((tx) => checkpointInSteps(tx, lease, values));
  }
  lease.status = status;
  return journal;
}
