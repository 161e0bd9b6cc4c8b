// The store: turns, their transcript and notices (the log), the tool journal and the inbox of
// decisions and cancels, in Postgres (or PGlite). Callers submit, read, decide and cancel; workers
// claim turns with a fenced lease and write each checkpoint as one compare-and-swap.

import { randomUUID } from 'node:crypto';
import {
  createTurn,
  undecided,
  isTerminal,
  parseTurnState,
  readDecision,
  type ApprovalDecision,
  type Message,
  type Notice,
  type Outcome,
  type ParkedCall,
  type ToolResult,
  type TurnError,
  type TurnLimitsInput,
  type TurnState,
} from '@turnkit/core';
import type { BudgetUsage, Grant } from '@turnkit/dispatch';
import { migrate } from './schema.js';
import { checkSchemaName, openPGlite, openPostgres, type ModuleLoader, type Row, type Sql, type SqlQuery } from './sql.js';
import type {
  Claim,
  ClaimOptions,
  Commit,
  DecideResult,
  InboxEntry,
  JournalEntry,
  Lease,
  ListOptions,
  PendingInbox,
  StoredStatus,
  StoredTurn,
  SubmitOptions,
  TurnPage,
  TurnSummary,
  WatchEvent,
  WatchOptions,
} from './types.js';

/** A write found that another worker holds the turn now (its lease token moved on). */
export class LeaseLostError extends Error {
  constructor(readonly turnId: string) {
    super(
      `Turn '${turnId}' is held by another worker now (its lease expired and was taken over); this worker stops working on it.`,
    );
    this.name = 'LeaseLostError';
  }
}

/** A write found a different version than it read: someone else wrote the turn meanwhile. */
export class ConflictError extends Error {
  constructor(readonly turnId: string) {
    super(
      `Turn '${turnId}' was written by someone else since this worker read it (compare-and-swap failed); this worker stops working on it.`,
    );
    this.name = 'ConflictError';
  }
}

export interface OpenStoreOptions {
  /** A Postgres schema to keep the tables in (created if missing); default: the connection's search_path. */
  readonly schema?: string;
  /** How driver packages are imported (tests use it to see the message for a missing driver). */
  readonly load?: ModuleLoader;
}

export interface Store {
  /** `pglite` or `postgres`. */
  readonly kind: 'pglite' | 'postgres';
  /** Queues a turn for a worker with that agent; returns its id. */
  submit(options: SubmitOptions): Promise<string>;
  /** The turn, or null when there is none with that id. */
  get(id: string): Promise<StoredTurn | null>;
  list(options?: ListOptions): Promise<TurnPage>;
  /** Decides parked calls; durable when it resolves. The first decision per call wins. */
  decide(id: string, decisions: Record<string, ApprovalDecision>): Promise<DecideResult>;
  /** Asks for the turn to be cancelled; durable when it resolves. False when the turn has already ended. */
  cancel(id: string, reason?: string): Promise<boolean>;
  /** What happens to the turn: its history, then new rows as they are written, until it ends. */
  watch(id: string, options?: WatchOptions): AsyncIterable<WatchEvent>;
  close(): Promise<void>;

  // The lease API (workers use it).
  claim(options: ClaimOptions): Promise<Claim | null>;
  /** Extends the lease; throws LeaseLostError when another worker took the turn. */
  renew(lease: Lease, leaseMs: number): Promise<void>;
  /** One compare-and-swap write; throws LeaseLostError or ConflictError. */
  commit(lease: Lease, commit: Commit): Promise<void>;
  /** Inbox rows not yet applied. */
  pendingInbox(lease: Lease): Promise<PendingInbox[]>;
  /** What the journal knows of these calls: results written, and calls started without a result. */
  journal(lease: Lease, callIds: readonly string[]): Promise<{ results: ToolResult[]; started: string[] }>;
  /** Journals that a call is about to run (before its tool starts). Fenced. */
  callStarted(lease: Lease, call: { readonly id: string; readonly name: string }): Promise<void>;
  /** Journals a call's result; the first result per call wins (returns false for a later one). Fenced. */
  callFinished(lease: Lease, result: ToolResult): Promise<boolean>;
}

const TERMINAL = new Set<StoredStatus>(['stopped', 'failed', 'cancelled']);
const STATUSES = new Set<StoredStatus>([
  'ready',
  'calling_model',
  'dispatching',
  'awaiting_approval',
  'steering',
  'finalizing',
  'stopped',
  'failed',
  'cancelled',
]);
const ID = /^[A-Za-z0-9_.:@-]{1,200}$/;
const ISO = (column: string, as = column): string => `to_json(${column}) #>> '{}' AS ${as}`;

/**
 * Opens a store and brings its schema up to date.
 *
 * - no argument: PGlite in `./.turnkit/` (one process only; a lock file guards it)
 * - `'memory://'`: PGlite in memory
 * - `'postgres://…'` or `'postgresql://…'`: a real Postgres through `pg`
 * - anything else: a directory for PGlite
 *
 * @example
 * const store = await openStore('memory://');
 * const id = await store.submit({ agent: 'calculator', input: 'What is 1 + 2?' });
 */
export async function openStore(url?: string, options: OpenStoreOptions = {}): Promise<Store> {
  if (url !== undefined && (typeof url !== 'string' || url === ''))
    throw new TypeError(`openStore takes 'memory://', 'postgres://…', a directory, or nothing; got ${JSON.stringify(url)}.`);
  const schema = options.schema === undefined ? undefined : checkSchemaName(options.schema);
  let sql: Sql;
  if (url === undefined) sql = await openPGlite('./.turnkit', schema, options.load);
  else if (url === 'memory://') sql = await openPGlite(undefined, schema, options.load);
  else if (/^postgres(ql)?:\/\//.test(url)) sql = await openPostgres(url, schema, options.load);
  else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) && !url.startsWith('file://')) {
    throw new TypeError(
      `openStore does not know the URL scheme of ${JSON.stringify(url)}: use 'memory://', 'postgres://…', a directory, or nothing.`,
    );
  } else sql = await openPGlite(url.startsWith('file://') ? new URL(url).pathname : url, schema, options.load);
  try {
    await migrate(sql);
  } catch (error) {
    await sql.close().catch(() => undefined);
    throw error;
  }
  return createStore(sql);
}

/** A store over any `Sql` connection (the schema must be migrated). */
export function createStore(sql: Sql): Store {
  let closed = false;
  const open = (): Sql => {
    if (closed) throw new Error('This store is closed; open a new one with openStore().');
    return sql;
  };

  /** Runs a fenced write: the turn's row is locked and its token checked first. */
  async function fenced<T>(lease: Lease, work: (tx: SqlQuery) => Promise<T>): Promise<T> {
    return open().transaction(async (tx) => {
      const [row] = await tx.query('SELECT lease_token FROM turnkit_turns WHERE id = $1 FOR UPDATE', [lease.id]);
      if (row === undefined || Number(row.lease_token) !== lease.token) throw new LeaseLostError(lease.id);
      return work(tx);
    });
  }

  const store: Store = {
    kind: sql.kind,

    async submit(options) {
      if (options === null || typeof options !== 'object')
        throw new TypeError('store.submit needs { agent, input?, id?, limits? }.');
      const { agent, input, limits } = options;
      if (typeof agent !== 'string' || agent === '')
        throw new TypeError(
          `store.submit option \`agent\` must be the name of an agent a worker registers, got ${JSON.stringify(agent)}.`,
        );
      if (input !== undefined && typeof input !== 'string') throw new TypeError('store.submit option `input` must be a string.');
      const id = options.id ?? `turn_${randomUUID()}`;
      if (typeof id !== 'string' || !ID.test(id))
        throw new TypeError(
          `store.submit option \`id\` must be 1 to 200 letters, digits or _ . : @ -, got ${JSON.stringify(id)}.`,
        );
      // Checks the limits now (throws a RangeError naming a bad one), so a worker never finds them bad.
      if (limits !== undefined) createTurn({ id, limits });
      const rows = await open().query(
        `INSERT INTO turnkit_turns (id, agent, input, limits, status) VALUES ($1, $2, $3, $4::jsonb, 'ready') ON CONFLICT (id) DO NOTHING RETURNING id`,
        [id, agent, input ?? null, limits === undefined ? null : JSON.stringify(limits)],
      );
      if (rows.length === 0)
        throw new Error(`store.submit: a turn with id '${id}' exists already; pick another id or leave \`id\` out.`);
      return id;
    },

    async get(id) {
      const db = open();
      const [row] = await db.query(
        `SELECT id, agent, input, status, state, error, ${ISO('created_at')}, ${ISO('updated_at')}, ${ISO('ended_at')} FROM turnkit_turns WHERE id = $1`,
        [id],
      );
      if (row === undefined) return null;
      const [log, inbox, calls] = await Promise.all([
        db.query(`SELECT data FROM turnkit_log WHERE turn_id = $1 AND kind = 'message' ORDER BY seq`, [id]),
        db.query(
          `SELECT kind, call_id, body, status, ${ISO('created_at')}, ${ISO('applied_at')} FROM turnkit_inbox WHERE turn_id = $1 ORDER BY id`,
          [id],
        ),
        db.query(
          `SELECT call_id, name, result, ${ISO('started_at')}, ${ISO('finished_at')} FROM turnkit_tool_results WHERE turn_id = $1 ORDER BY coalesce(started_at, finished_at), call_id`,
          [id],
        ),
      ]);
      let state: TurnState | null = null;
      try {
        state = row.state === null ? null : parseTurnState(row.state);
      } catch {
        state = null;
      }
      const decisions = inbox.map(toInboxEntry);
      const storeError = (row.error ?? null) as TurnError | null;
      const outcome: Outcome | null =
        storeError !== null
          ? { status: 'failed', error: storeError }
          : state !== null && isTerminal(state)
            ? (state.outcome as Outcome)
            : null;
      const decided = new Set(decisions.filter((d) => d.kind === 'decision' && d.status !== 'ignored').map((d) => d.callId));
      const parked: ParkedCall[] =
        state !== null && state.status === 'awaiting_approval' && state.batch !== null
          ? undecided(state).filter((p) => !decided.has(p.call.id))
          : [];
      return {
        id: String(row.id),
        agent: String(row.agent),
        status: row.status as StoredStatus,
        input: (row.input ?? null) as string | null,
        state,
        transcript: log.map((r) => r.data as Message),
        parked,
        decisions,
        toolCalls: calls.map(
          (r): JournalEntry => ({
            callId: String(r.call_id),
            name: String(r.name),
            startedAt: (r.started_at ?? null) as string | null,
            finishedAt: (r.finished_at ?? null) as string | null,
            result: (r.result ?? null) as ToolResult | null,
          }),
        ),
        outcome,
        error: storeError ?? (outcome?.status === 'failed' ? outcome.error : null),
        createdAt: String(row.created_at),
        updatedAt: String(row.updated_at),
        endedAt: (row.ended_at ?? null) as string | null,
      };
    },

    async list(options = {}) {
      const { status, cursor } = options;
      const limit = options.limit ?? 50;
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw new RangeError(`store.list option \`limit\` must be a whole number from 1 to 1000, got ${String(limit)}.`);
      if (status !== undefined && !STATUSES.has(status))
        throw new TypeError(
          `store.list option \`status\` must be one of ${[...STATUSES].join(', ')}; got ${JSON.stringify(status)}.`,
        );
      if (cursor !== undefined && cursor !== null && !/^\d+$/.test(cursor))
        throw new TypeError(`store.list option \`cursor\` must be the cursor of a previous page, got ${JSON.stringify(cursor)}.`);
      const rows = await open().query(
        `SELECT seq::text AS seq, id, agent, status, ${ISO('created_at')}, ${ISO('updated_at')} FROM turnkit_turns
         WHERE ($1::text IS NULL OR status = $1) AND ($2::bigint IS NULL OR seq > $2::bigint) ORDER BY seq LIMIT $3`,
        [status ?? null, cursor ?? null, limit + 1],
      );
      const page = rows.slice(0, limit);
      const turns = page.map(
        (r): TurnSummary => ({
          id: String(r.id),
          agent: String(r.agent),
          status: r.status as StoredStatus,
          createdAt: String(r.created_at),
          updatedAt: String(r.updated_at),
        }),
      );
      return { turns, cursor: rows.length > limit ? String(page[page.length - 1]?.seq) : null };
    },

    async decide(id, decisions) {
      if (decisions === null || typeof decisions !== 'object' || Array.isArray(decisions))
        throw new TypeError(
          'store.decide needs decisions by call id: { [callId]: { type: "approve" } | { type: "reject", reason? } }.',
        );
      const entries = Object.entries(decisions);
      if (entries.length === 0) throw new TypeError('store.decide got no decisions; pass at least one { [callId]: decision }.');
      for (const [callId, decision] of entries) {
        if (readDecision(decision) === null) {
          throw new TypeError(
            `store.decide: the decision for call '${callId}' is ${JSON.stringify(decision)}; use { type: 'approve', remember?: 'session' | 'tool' } or { type: 'reject', reason? }.`,
          );
        }
      }
      return open().transaction(async (tx) => {
        const [row] = await tx.query('SELECT status, state FROM turnkit_turns WHERE id = $1 FOR UPDATE', [id]);
        if (row === undefined) throw new Error(`store.decide: there is no turn '${id}'.`);
        if (row.status !== 'awaiting_approval')
          throw new Error(`store.decide: turn '${id}' is not waiting for approval (its status is ${String(row.status)}).`);
        let state: TurnState;
        try {
          state = parseTurnState(row.state);
        } catch (error) {
          throw new Error(
            `store.decide: the stored state of turn '${id}' cannot be read (${error instanceof Error ? error.message : String(error)}).`,
          );
        }
        const parked = new Set((state.batch?.parked ?? []).map((p) => p.call.id));
        const unknown = entries.map(([callId]) => callId).filter((callId) => !parked.has(callId));
        if (unknown.length > 0) {
          throw new Error(
            `store.decide: turn '${id}' has no parked call ${unknown.map((c) => `'${c}'`).join(', ')}; its parked calls are ${[...parked].map((c) => `'${c}'`).join(', ')}.`,
          );
        }
        const accepted: string[] = [];
        const ignored: string[] = [];
        for (const [callId, decision] of entries) {
          const inserted = Object.hasOwn(state.batch?.decisions ?? {}, callId)
            ? []
            : await tx.query(
                `INSERT INTO turnkit_inbox (turn_id, kind, call_id, body) VALUES ($1, 'decision', $2, $3::jsonb) ON CONFLICT (turn_id, call_id) WHERE kind = 'decision' DO NOTHING RETURNING id`,
                [id, callId, JSON.stringify(readDecision(decision))],
              );
          (inserted.length > 0 ? accepted : ignored).push(callId);
        }
        if (accepted.length > 0) await tx.query('UPDATE turnkit_turns SET runnable = true WHERE id = $1', [id]);
        return { accepted, ignored };
      });
    },

    async cancel(id, reason) {
      if (reason !== undefined && typeof reason !== 'string') throw new TypeError('store.cancel: `reason` must be a string.');
      return open().transaction(async (tx) => {
        const [row] = await tx.query('SELECT status FROM turnkit_turns WHERE id = $1 FOR UPDATE', [id]);
        if (row === undefined) throw new Error(`store.cancel: there is no turn '${id}'.`);
        if (TERMINAL.has(row.status as StoredStatus)) return false;
        await tx.query(
          `INSERT INTO turnkit_inbox (turn_id, kind, body) VALUES ($1, 'cancel', $2::jsonb) ON CONFLICT (turn_id) WHERE kind = 'cancel' DO NOTHING`,
          [id, JSON.stringify({ reason: reason ?? 'cancelled by the caller' })],
        );
        await tx.query('UPDATE turnkit_turns SET runnable = true WHERE id = $1', [id]);
        return true;
      });
    },

    watch(id, options = {}) {
      return watchTurn(open(), id, options);
    },

    async close() {
      if (closed) return;
      closed = true;
      await sql.close();
    },

    async claim({ owner, leaseMs }) {
      checkLeaseMs(leaseMs);
      const [row] = await open().query(
        `UPDATE turnkit_turns AS t SET lease_owner = $1, lease_token = t.lease_token + 1,
           lease_expires_at = now() + $2::int * interval '1 millisecond', updated_at = now()
         WHERE t.id = (SELECT id FROM turnkit_turns WHERE runnable AND (lease_expires_at IS NULL OR lease_expires_at <= now())
                       ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED)
         RETURNING t.id, t.agent, t.input, t.limits, t.state, t.grants, t.budget_usage, t.lease_token, t.version, t.status`,
        [owner, leaseMs],
      );
      if (row === undefined) return null;
      const id = String(row.id);
      const log = await open().query(`SELECT data FROM turnkit_log WHERE turn_id = $1 AND kind = 'message' ORDER BY seq`, [id]);
      return {
        lease: { id, owner, token: Number(row.lease_token), version: Number(row.version), status: row.status as StoredStatus },
        agent: String(row.agent),
        input: (row.input ?? null) as string | null,
        limits: (row.limits ?? null) as TurnLimitsInput | null,
        state: row.state ?? null,
        grants: (row.grants ?? []) as Grant[],
        budgetUsage: (row.budget_usage ?? null) as BudgetUsage | null,
        transcript: log.map((r) => r.data as Message),
      };
    },

    async renew(lease, leaseMs) {
      checkLeaseMs(leaseMs);
      const rows = await open().query(
        `UPDATE turnkit_turns SET lease_expires_at = now() + $3::int * interval '1 millisecond' WHERE id = $1 AND lease_token = $2 RETURNING id`,
        [lease.id, lease.token, leaseMs],
      );
      if (rows.length === 0) throw new LeaseLostError(lease.id);
    },

    async commit(lease, commit) {
      const messages = commit.messages ?? [];
      const notices = commit.notices ?? [];
      const state = commit.state;
      const status: StoredStatus = commit.fail !== undefined ? 'failed' : (state?.status ?? lease.status);
      const terminal = TERMINAL.has(status);
      const rows: { kind: string; data: unknown }[] = [
        ...messages.map((m) => ({ kind: 'message', data: m })),
        ...notices.map((n) => ({ kind: 'notice', data: n })),
      ];
      if (status !== lease.status)
        rows.push({
          kind: 'status',
          data: {
            status,
            outcome: commit.fail !== undefined ? { status: 'failed', error: commit.fail } : (state?.outcome ?? null),
          },
        });
      const version = await open().transaction(async (tx) => {
        const updated = await tx.query(
          `UPDATE turnkit_turns SET
             state = coalesce($4::jsonb, state), status = $5, error = coalesce($6::jsonb, error),
             grants = coalesce($7::jsonb, grants), budget_usage = coalesce($8::jsonb, budget_usage),
             version = version + 1, log_seq = log_seq + $9, updated_at = now(),
             ended_at = CASE WHEN $10 THEN now() ELSE ended_at END,
             runnable = CASE WHEN $10 THEN false ELSE runnable END,
             lease_owner = CASE WHEN $11 OR $10 THEN NULL ELSE lease_owner END,
             lease_expires_at = CASE WHEN $11 OR $10 THEN NULL ELSE lease_expires_at END
           WHERE id = $1 AND lease_token = $2 AND version = $3
           RETURNING version, log_seq`,
          [
            lease.id,
            lease.token,
            lease.version,
            state === undefined ? null : JSON.stringify(state),
            status,
            commit.fail === undefined ? null : JSON.stringify(commit.fail),
            commit.grants === undefined ? null : JSON.stringify(commit.grants),
            commit.budgetUsage === undefined ? null : JSON.stringify(commit.budgetUsage),
            rows.length,
            terminal,
            commit.release === true,
          ],
        );
        const [row] = updated;
        if (row === undefined) {
          const [current] = await tx.query('SELECT lease_token FROM turnkit_turns WHERE id = $1', [lease.id]);
          throw current !== undefined && Number(current.lease_token) === lease.token
            ? new ConflictError(lease.id)
            : new LeaseLostError(lease.id);
        }
        const first = Number(row.log_seq) - rows.length + 1;
        if (rows.length > 0) {
          await tx.query(
            `INSERT INTO turnkit_log (turn_id, seq, kind, data)
             SELECT $1, $2::int + (r.ordinality - 1)::int, r.value ->> 'kind', r.value -> 'data' FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS r`,
            [lease.id, first, JSON.stringify(rows)],
          );
        }
        const applied = commit.applied ?? [];
        if (applied.length > 0) {
          await tx.query(
            `UPDATE turnkit_inbox SET status = 'applied', applied_at = now() WHERE turn_id = $1 AND status = 'pending' AND id = ANY($2::bigint[])`,
            [lease.id, applied],
          );
        }
        if (terminal) {
          // What arrived too late to matter (a decision or cancel for a turn that ended) is closed, not lost.
          await tx.query(
            `UPDATE turnkit_inbox SET status = 'ignored', applied_at = now() WHERE turn_id = $1 AND status = 'pending'`,
            [lease.id],
          );
        } else if (commit.release === true) {
          // Runnable again only with something to do: a decision or cancel waiting, or a state in flight.
          await tx.query(
            `UPDATE turnkit_turns SET runnable = ($2 OR EXISTS (SELECT 1 FROM turnkit_inbox WHERE turn_id = $1 AND status = 'pending')) WHERE id = $1`,
            [lease.id, status !== 'awaiting_approval'],
          );
        }
        return Number(row.version);
      });
      lease.version = version;
      lease.status = status;
    },

    async pendingInbox(lease) {
      const rows = await open().query(
        `SELECT id::text AS id, kind, call_id, body FROM turnkit_inbox WHERE turn_id = $1 AND status = 'pending' ORDER BY id`,
        [lease.id],
      );
      return rows.map((r): PendingInbox => {
        const body = (r.body ?? {}) as { reason?: unknown };
        return {
          inboxId: String(r.id),
          kind: r.kind as 'decision' | 'cancel',
          callId: (r.call_id ?? null) as string | null,
          decision: r.kind === 'decision' ? r.body : null,
          reason: r.kind === 'cancel' && typeof body.reason === 'string' ? body.reason : null,
        };
      });
    },

    async journal(lease, callIds) {
      const rows = await open().query(
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
    },

    async callStarted(lease, call) {
      await fenced(lease, (tx) =>
        tx.query(
          `INSERT INTO turnkit_tool_results (turn_id, call_id, name, started_at, started_token) VALUES ($1, $2, $3, now(), $4)
           ON CONFLICT (turn_id, call_id) DO UPDATE SET started_at = now(), started_token = $4 WHERE turnkit_tool_results.result IS NULL`,
          [lease.id, call.id, call.name, lease.token],
        ),
      );
    },

    async callFinished(lease, result) {
      const rows = await fenced(lease, (tx) =>
        tx.query(
          `INSERT INTO turnkit_tool_results (turn_id, call_id, name, result, finished_at) VALUES ($1, $2, $3, $4::jsonb, now())
           ON CONFLICT (turn_id, call_id) DO UPDATE SET result = EXCLUDED.result, finished_at = now() WHERE turnkit_tool_results.result IS NULL
           RETURNING call_id`,
          [lease.id, result.callId, result.name, JSON.stringify(result)],
        ),
      );
      return rows.length > 0;
    },
  };
  return store;
}

function checkLeaseMs(leaseMs: unknown): void {
  if (typeof leaseMs !== 'number' || !Number.isInteger(leaseMs) || leaseMs < 0 || leaseMs > 2_147_483_647) {
    throw new RangeError(`leaseMs must be a whole number of milliseconds >= 0, got ${String(leaseMs)}.`);
  }
}

function toInboxEntry(r: Row): InboxEntry {
  const body = (r.body ?? {}) as { reason?: unknown };
  const decision = r.kind === 'decision' ? readDecision(r.body) : null;
  return {
    kind: r.kind as 'decision' | 'cancel',
    callId: (r.call_id ?? null) as string | null,
    decision,
    reason: r.kind === 'cancel' && typeof body.reason === 'string' ? body.reason : null,
    status: r.status as InboxEntry['status'],
    createdAt: String(r.created_at),
    appliedAt: (r.applied_at ?? null) as string | null,
  };
}

async function* watchTurn(sql: Sql, id: string, options: WatchOptions): AsyncGenerator<WatchEvent> {
  const pollMs = options.pollMs ?? 200;
  if (!Number.isFinite(pollMs) || pollMs < 1)
    throw new RangeError(`store.watch option \`pollMs\` must be a number of milliseconds >= 1, got ${String(pollMs)}.`);
  let after = options.after ?? 0;
  const [turn] = await sql.query('SELECT status FROM turnkit_turns WHERE id = $1', [id]);
  if (turn === undefined) throw new Error(`store.watch: there is no turn '${id}'.`);
  for (;;) {
    if (options.signal?.aborted === true) return;
    const rows = await sql.query('SELECT seq, kind, data FROM turnkit_log WHERE turn_id = $1 AND seq > $2 ORDER BY seq', [
      id,
      after,
    ]);
    for (const r of rows) {
      const seq = Number(r.seq);
      after = seq;
      if (r.kind === 'message') yield { type: 'message', seq, message: r.data as Message };
      else if (r.kind === 'notice') yield { type: 'notice', seq, notice: r.data as Notice };
      else {
        const data = r.data as { status: StoredStatus; outcome: Outcome | null };
        yield { type: 'status', seq, status: data.status, outcome: data.outcome ?? null };
        if (TERMINAL.has(data.status)) return;
      }
    }
    if (rows.length === 0) {
      const [now] = await sql.query('SELECT status, log_seq FROM turnkit_turns WHERE id = $1', [id]);
      if (now === undefined || (TERMINAL.has(now.status as StoredStatus) && Number(now.log_seq) <= after)) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, pollMs);
        function done(): void {
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', done);
          resolve();
        }
        options.signal?.addEventListener('abort', done, { once: true });
      });
    }
  }
}
