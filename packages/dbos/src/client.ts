// The client side of turns on DBOS: the store's client API (`submit`, `get`, `list`, `decide`,
// `cancel`, `watch`) with the store's shapes, checks and errors, over the adapter's tables. A
// decision or cancel is an inbox row and its DBOS message, written in one transaction
// (`sendInTransaction`): the row says what was received (and `get` shows it), the message is what
// the turn's workflow receives, keyed by the row's id so it is sent once.

import {
  isTerminal,
  parseTurnState,
  type ApprovalDecision,
  type Message,
  type Notice,
  type Outcome,
  type TurnError,
  type TurnState,
} from '@turnkit/core';
import {
  CallAlreadyDecidedError,
  type StoredStatus,
  type StoredTurn,
  type SubmitOptions,
  type StoreClient,
  type TurnSummary,
  type WatchEvent,
  TurnExistsError,
  TurnNotFoundError,
  TurnNotWaitingError,
} from '@turnkit/store';
import {
  checkDecidable,
  checkDecisions,
  checkList,
  checkSubmit,
  ISO,
  messageOf,
  nap,
  parkedIds,
  readState,
  rowResult,
  TERMINAL,
  toInboxEntry,
  undecidedParked,
} from '@turnkit/store/internal';
import type { DBOSClient } from '@dbos-inc/dbos-sdk';
import type pg from 'pg';
import { transaction } from './schema.js';
import type { DbosTurnsClient } from './types.js';
import { CANCEL_TOPIC, decisionTopic, WAKE_TOPIC } from './workflow.js';

/** Postgres's SQLSTATE for a unique violation. */
const UNIQUE_VIOLATION = '23505';
/** Postgres's SQLSTATE for a table that does not exist. */
const UNDEFINED_TABLE = '42P01';

/** Threads of turns (`submit({ thread })`) are the store's; turns on DBOS do not hold conversations yet. */
const NO_THREADS =
  'Threads of turns are not supported on DBOS yet: submit turns without `thread`, or use @turnkit/store (openStore) for conversations.';

export interface ClientParts {
  readonly pool: pg.Pool;
  readonly schema: string;
  readonly dbos: DBOSClient;
  /** Starts the turn's workflow: in this process when it runs turns, else on the queue, in the submit's transaction. */
  readonly start: (tx: pg.PoolClient, id: string) => Promise<(() => Promise<void>) | null>;
}

export function createClient(parts: ClientParts): Omit<DbosTurnsClient, 'close' | 'runsTurns'> {
  const { pool, schema: s, dbos } = parts;

  async function submit(options: SubmitOptions): Promise<string> {
    const id = checkSubmit(options);
    if (options.thread !== undefined) throw new TypeError(NO_THREADS);
    let after: (() => Promise<void>) | null = null;
    try {
      await transaction(pool, async (tx) => {
        await tx.query(`INSERT INTO ${s}.turns (id, agent, input, limits) VALUES ($1, $2, $3, $4::jsonb)`, [
          id,
          options.agent,
          options.input ?? null,
          options.limits === undefined ? null : JSON.stringify(options.limits),
        ]);
        after = await parts.start(tx, id);
      });
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (code === UNIQUE_VIOLATION) throw new TurnExistsError(id);
      if (code === UNDEFINED_TABLE)
        throw new Error(
          `store.submit: DBOS's tables are not in this database yet (${messageOf(error)}); start a process that runs turns (createDbosTurns({ agents })) on it first: DBOS creates them when it launches.`,
        );
      throw error;
    }
    await (after as (() => Promise<void>) | null)?.();
    return id;
  }

  /** The turn, its log, inbox and journal as of one moment (one snapshot: a write in between shows in all or none). */
  async function get(id: string): Promise<StoredTurn | null> {
    if (typeof id !== 'string') throw new TypeError(NO_THREADS);
    const client = await pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const turn = await read(client, id);
      await client.query('COMMIT');
      return turn;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async function read(db: pg.PoolClient, id: string): Promise<StoredTurn | null> {
    const { rows } = await db.query(
      `SELECT id, agent, input, status, state, error, ${ISO('created_at')}, ${ISO('updated_at')}, ${ISO('ended_at')} FROM ${s}.turns WHERE id = $1`,
      [id],
    );
    const row = rows[0];
    if (row === undefined) return null;
    const log = await db.query(`SELECT data FROM ${s}.log WHERE turn_id = $1 AND kind = 'message' ORDER BY seq`, [id]);
    const inbox = await db.query(
      `SELECT kind, call_id, body, status, ${ISO('created_at')}, ${ISO('applied_at')} FROM ${s}.inbox WHERE turn_id = $1 ORDER BY id`,
      [id],
    );
    const calls = await db.query(
      `SELECT call_id, name, result, ${ISO('started_at')}, ${ISO('finished_at')} FROM ${s}.calls WHERE turn_id = $1 ORDER BY coalesce(started_at, finished_at), call_id`,
      [id],
    );
    const { state, unreadable } = readState(id, row.state);
    const decisions = inbox.rows.map(toInboxEntry);
    const failure = (row.error ?? null) as TurnError | null;
    const outcome: Outcome | null =
      failure !== null ? { status: 'failed', error: failure } : state !== null && isTerminal(state) ? state.outcome : null;
    return {
      id: String(row.id),
      agent: String(row.agent),
      status: row.status as StoredStatus,
      input: (row.input ?? null) as string | null,
      state,
      transcript: log.rows.map((r) => r.data as Message),
      parked: undecidedParked(state, decisions),
      decisions,
      toolCalls: calls.rows.map((r) => ({
        callId: String(r.call_id),
        name: String(r.name),
        startedAt: (r.started_at ?? null) as string | null,
        finishedAt: (r.finished_at ?? null) as string | null,
        result: rowResult(r),
      })),
      outcome,
      error: failure ?? unreadable ?? (outcome?.status === 'failed' ? outcome.error : null),
      thread: null,
      createdAt: String(row.created_at),
      updatedAt: String(row.updated_at),
      endedAt: (row.ended_at ?? null) as string | null,
    };
  }

  return {
    kind: 'postgres',
    submit,
    get: get as StoreClient['get'],
    async list(options = {}) {
      const limit = checkList(options);
      const { rows } = await pool.query(
        `SELECT seq::text AS seq, id, agent, status, ${ISO('created_at')}, ${ISO('updated_at')} FROM ${s}.turns
         WHERE ($1::text IS NULL OR status = $1) AND ($2::bigint IS NULL OR seq > $2::bigint) ORDER BY seq LIMIT $3`,
        [options.status ?? null, options.cursor ?? null, limit + 1],
      );
      const page = rows.slice(0, limit);
      const turns = page.map(
        (r): TurnSummary => ({
          id: String(r.id),
          agent: String(r.agent),
          status: r.status as StoredStatus,
          thread: null,
          createdAt: String(r.created_at),
          updatedAt: String(r.updated_at),
        }),
      );
      return { turns, cursor: rows.length > limit ? String(page[page.length - 1]?.seq) : null };
    },

    async decide(id: string, decisions: Record<string, ApprovalDecision>) {
      const entries = checkDecisions(decisions);
      return transaction(pool, async (tx) => {
        const { rows } = await tx.query(`SELECT status, state FROM ${s}.turns WHERE id = $1 FOR UPDATE`, [id]);
        const row = rows[0];
        if (row === undefined) throw new TurnNotFoundError(id);
        if (row.status !== 'awaiting_approval') throw new TurnNotWaitingError(id, String(row.status));
        let state: TurnState;
        try {
          state = parseTurnState(row.state);
        } catch (error) {
          throw new Error(`store.decide: the stored state of turn '${id}' cannot be read (${messageOf(error)}).`);
        }
        const inbox = await tx.query(
          `SELECT call_id FROM ${s}.inbox WHERE turn_id = $1 AND kind = 'decision' AND call_id = ANY($2::text[])`,
          [id, parkedIds(state)],
        );
        const callIds = entries.map(([callId]) => callId);
        checkDecidable(id, state, new Set(inbox.rows.map((r) => String(r.call_id))), callIds);
        for (const [callId, decision] of entries) {
          const inserted = await tx.query(
            `INSERT INTO ${s}.inbox (turn_id, kind, call_id, body) VALUES ($1, 'decision', $2, $3::jsonb) ON CONFLICT (turn_id, call_id) WHERE kind = 'decision' DO NOTHING RETURNING id`,
            [id, callId, JSON.stringify(decision)],
          );
          const inboxId = inserted.rows[0]?.id;
          if (inboxId === undefined) throw new CallAlreadyDecidedError(id, [callId]);
          // The decision's id (its inbox row) keys its message: it is sent once.
          await dbos.sendInTransaction(tx, id, { decision }, decisionTopic(callId), `turnkit.decision:${id}:${inboxId}`);
        }
        await dbos.sendInTransaction(tx, id, {}, WAKE_TOPIC);
        return { accepted: callIds, ignored: [] };
      });
    },

    async cancel(id: string, reason?: string) {
      if (reason !== undefined && typeof reason !== 'string') throw new TypeError('store.cancel: `reason` must be a string.');
      return transaction(pool, async (tx) => {
        const { rows } = await tx.query(`SELECT status FROM ${s}.turns WHERE id = $1 FOR UPDATE`, [id]);
        const row = rows[0];
        if (row === undefined) throw new TurnNotFoundError(id, 'cancel');
        if (TERMINAL.has(row.status as StoredStatus)) return false;
        const body = { reason: reason ?? 'cancelled by the caller' };
        const inserted = await tx.query(
          `INSERT INTO ${s}.inbox (turn_id, kind, body) VALUES ($1, 'cancel', $2::jsonb) ON CONFLICT (turn_id) WHERE kind = 'cancel' DO NOTHING RETURNING id`,
          [id, JSON.stringify(body)],
        );
        const inboxId = inserted.rows[0]?.id;
        if (inboxId !== undefined) {
          await dbos.sendInTransaction(tx, id, body, CANCEL_TOPIC, `turnkit.cancel:${id}:${inboxId}`);
          await dbos.sendInTransaction(tx, id, {}, WAKE_TOPIC);
        }
        return true;
      });
    },

    async listThreads() {
      throw new TypeError(NO_THREADS);
    },
    async closeThread() {
      throw new TypeError(NO_THREADS);
    },
    watch: async function* (
      id: string | { readonly thread: string },
      options: Parameters<StoreClient['watch']>[1] & object = {},
    ): AsyncGenerator<WatchEvent> {
      if (typeof id !== 'string') throw new TypeError(NO_THREADS);
      const pollMs = options.pollMs ?? 200;
      if (!Number.isFinite(pollMs) || pollMs < 1)
        throw new RangeError(`store.watch option \`pollMs\` must be a number of milliseconds >= 1, got ${String(pollMs)}.`);
      let after = options.after ?? 0;
      const first = await pool.query(`SELECT status FROM ${s}.turns WHERE id = $1`, [id]);
      if (first.rows.length === 0) throw new Error(`store.watch: there is no turn '${id}'.`);
      for (;;) {
        if (options.signal?.aborted === true) return;
        const { rows } = await pool.query(`SELECT seq, kind, data FROM ${s}.log WHERE turn_id = $1 AND seq > $2 ORDER BY seq`, [
          id,
          after,
        ]);
        for (const r of rows) {
          const event = toWatchEvent(r);
          after = event.seq;
          yield event;
          if (event.type === 'status' && TERMINAL.has(event.status)) return;
        }
        if (rows.length === 0) {
          const now = await pool.query(`SELECT status, log_seq FROM ${s}.turns WHERE id = $1`, [id]);
          const turn = now.rows[0];
          if (turn === undefined || (TERMINAL.has(turn.status as StoredStatus) && Number(turn.log_seq) <= after)) return;
          await nap(pollMs, options.signal);
        }
      }
    } as StoreClient['watch'],
  };
}

function toWatchEvent(r: { seq: unknown; kind: unknown; data: unknown }): WatchEvent {
  const seq = Number(r.seq);
  if (r.kind === 'message') return { type: 'message', seq, message: r.data as Message };
  if (r.kind === 'notice') return { type: 'notice', seq, notice: r.data as Notice };
  const data = r.data as { status: StoredStatus; outcome: Outcome | null };
  return { type: 'status', seq, status: data.status, outcome: data.outcome ?? null };
}
