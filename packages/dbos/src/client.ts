// The client side of turns on DBOS: the store's client API (`submit`, `get`, `list`, `decide`,
// `cancel`, `watch`) with the store's shapes, checks and errors, over the adapter's tables. A
// decision or cancel is an inbox row and its DBOS message, written in one transaction
// (`sendInTransaction`): the row says what was received (and `get` shows it), the message is what
// the turn's workflow receives, keyed by the row's id so it is sent once. Threads of turns
// (`submit({ thread })`) follow the store's contract: the thread's row is locked by a submit and a
// close, its turns run in `seq` order (the workflow waits; see workflow.ts), and `get`, `watch`,
// `listThreads` and `closeThread` answer as the store's do.

import {
  isTerminal,
  parseTurnState,
  type ApprovalDecision,
  type Message,
  type Outcome,
  type TurnError,
  type TurnState,
} from '@turnkit/core';
import {
  CallAlreadyDecidedError,
  type StoredStatus,
  type StoredThread,
  type StoredTurn,
  type SubmitOptions,
  type StoreClient,
  type ThreadPage,
  ThreadBusyError,
  ThreadNotFoundError,
  type ThreadWatchEvent,
  type WatchEvent,
  TurnExistsError,
  TurnNotFoundError,
  TurnNotWaitingError,
} from '@turnkit/store';
import type { ChildLogEntry } from '@turnkit/store/internal';
import {
  activeKeys,
  checkDecidable,
  childTurns,
  checkDecisions,
  checkList,
  checkListThreads,
  checkPollMs,
  checkSubmit,
  checkThreadTakes,
  contextOf,
  ISO,
  messageOf,
  nap,
  parkedIds,
  readState,
  splitKey,
  TERMINAL,
  toInboxEntry,
  toJournalEntry,
  toStoredThread,
  toThreadSummary,
  toTurnSummary,
  toWatchEvent,
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

/** The turn of a thread (over the thread's id as `th.id`) that has not ended and runs first. */
const CURRENT_SQL = (s: string): string =>
  `(SELECT c.id FROM ${s}.turns c WHERE c.thread = th.id AND c.ended_at IS NULL ORDER BY c.seq LIMIT 1)`;

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
    const { thread } = options;
    let after: (() => Promise<void>) | null = null;
    try {
      await transaction(pool, async (tx) => {
        // A turn of a thread takes its place in line (`seq`) under the thread's lock, as in the store.
        if (thread !== undefined) await lockThread(tx, thread, options.agent, options.whenBusy ?? 'wait');
        await tx.query(`INSERT INTO ${s}.turns (id, agent, input, limits, thread) VALUES ($1, $2, $3, $4::jsonb, $5)`, [
          id,
          options.agent,
          options.input ?? null,
          options.limits === undefined ? null : JSON.stringify(options.limits),
          thread ?? null,
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

  /**
   * Locks the thread's row for this transaction (made when the id is new), and checks it takes this
   * turn (the store's checks): it is open, of the same agent, and (with `refuse`) has no turn that has not ended.
   */
  async function lockThread(tx: pg.PoolClient, thread: string, agent: string, whenBusy: 'wait' | 'refuse'): Promise<void> {
    await tx.query(`INSERT INTO ${s}.threads (id, agent) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, [thread, agent]);
    const { rows } = await tx.query(`SELECT agent, closed_at IS NOT NULL AS closed FROM ${s}.threads WHERE id = $1 FOR UPDATE`, [
      thread,
    ]);
    checkThreadTakes(thread, rows[0], agent);
    if (whenBusy === 'wait') return;
    const busy = await tx.query(`SELECT id, status FROM ${s}.turns WHERE thread = $1 AND ended_at IS NULL ORDER BY seq LIMIT 1`, [
      thread,
    ]);
    const open = busy.rows[0];
    if (open !== undefined) throw new ThreadBusyError(thread, String(open.id), String(open.status));
  }

  /** A turn (its log, inbox and journal) or a thread, as of one moment (one snapshot: a write in between shows in all or none). */
  async function get(ref: string | { readonly thread: string }): Promise<StoredTurn | StoredThread | null> {
    const thread = typeof ref === 'object' && ref !== null ? ref.thread : undefined;
    if (thread === undefined && typeof ref !== 'string')
      throw new TypeError(`store.get takes a turn id or { thread }, got ${JSON.stringify(ref)}.`);
    const client = await pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const found = thread === undefined ? await read(client, ref as string) : await readThread(client, thread);
      await client.query('COMMIT');
      return found;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async function read(db: pg.PoolClient, id: string): Promise<StoredTurn | null> {
    const { rows } = await db.query(
      `SELECT id, agent, thread, input, status, state, error, ${ISO('created_at')}, ${ISO('updated_at')}, ${ISO('ended_at')} FROM ${s}.turns WHERE id = $1`,
      [id],
    );
    const row = rows[0];
    if (row === undefined) return null;
    const log = await db.query(`SELECT data FROM ${s}.log WHERE turn_id = $1 AND kind = 'message' ORDER BY seq`, [id]);
    const inbox = await db.query(
      `SELECT turn_id, kind, call_id, body, status, ${ISO('created_at')}, ${ISO('applied_at')} FROM ${s}.inbox WHERE turn_id = $1 ORDER BY id`,
      [id],
    );
    const calls = await db.query(
      `SELECT call_id, name, result, ${ISO('started_at')}, ${ISO('finished_at')} FROM ${s}.calls WHERE turn_id = $1 ORDER BY coalesce(started_at, finished_at), call_id`,
      [id],
    );
    const { state, unreadable } = readState(id, row.state);
    // A turn of many agents: its child turns' entries (a turn of one agent has none to read).
    const children =
      state?.agents == null
        ? []
        : childTurns(
            id,
            (await db.query(`SELECT data FROM ${s}.log WHERE turn_id = $1 AND kind = 'child' ORDER BY seq`, [id])).rows.map(
              (r) => r.data as ChildLogEntry,
            ),
          );
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
      // A child turn's call (journaled under its key) by its own id, naming the child turn.
      toolCalls: calls.rows.map((r) => toJournalEntry(r, id)),
      ...(children.length === 0 ? {} : { children }),
      outcome,
      error: failure ?? unreadable ?? (outcome?.status === 'failed' ? outcome.error : null),
      thread: (row.thread ?? null) as string | null,
      createdAt: String(row.created_at),
      updatedAt: String(row.updated_at),
      endedAt: (row.ended_at ?? null) as string | null,
    };
  }

  /** A thread: its turns in order, its context (from its latest compaction on), and the parked calls of its current turn. */
  async function readThread(db: pg.PoolClient, id: string): Promise<StoredThread | null> {
    const { rows } = await db.query(
      `SELECT th.id, th.agent, th.grants, th.close_reason, ${ISO('th.created_at', 'created_at')}, ${ISO('th.closed_at', 'closed_at')},
         ${CURRENT_SQL(s)} AS current
       FROM ${s}.threads th WHERE th.id = $1`,
      [id],
    );
    const row = rows[0];
    if (row === undefined) return null;
    const turns = await db.query(
      `SELECT id, agent, thread, status, ${ISO('created_at')}, ${ISO('updated_at')} FROM ${s}.turns WHERE thread = $1 ORDER BY seq`,
      [id],
    );
    const context = await db.query(
      `WITH since AS (SELECT coalesce(max(t.seq), 0) AS seq FROM ${s}.turns t
         WHERE t.thread = $1 AND EXISTS (SELECT 1 FROM ${s}.log l WHERE l.turn_id = t.id AND l.kind = 'compaction'))
       SELECT l.kind, l.data FROM ${s}.turns t JOIN ${s}.log l ON l.turn_id = t.id
       WHERE t.thread = $1 AND t.seq >= (SELECT seq FROM since) AND l.kind IN ('message', 'compaction') ORDER BY t.seq, l.seq`,
      [id],
    );
    const current = (row.current ?? null) as string | null;
    const parked = current === null ? [] : ((await read(db, current))?.parked ?? []);
    return toStoredThread(row, turns.rows, contextOf(context.rows), parked);
  }

  /** Cancels a turn that has not ended, in `tx`: an inbox row, and its message to the workflow (sent once). */
  async function cancelIn(tx: pg.PoolClient, id: string, reason: string): Promise<void> {
    const body = { reason };
    const inserted = await tx.query(
      `INSERT INTO ${s}.inbox (turn_id, kind, body) VALUES ($1, 'cancel', $2::jsonb) ON CONFLICT (turn_id) WHERE kind = 'cancel' DO NOTHING RETURNING id`,
      [id, JSON.stringify(body)],
    );
    const inboxId = inserted.rows[0]?.id;
    if (inboxId !== undefined) {
      await dbos.sendInTransaction(tx, id, body, CANCEL_TOPIC, `turnkit.cancel:${id}:${inboxId}`);
      await dbos.sendInTransaction(tx, id, {}, WAKE_TOPIC);
    }
  }

  /** A turn's log (messages, notices, status changes) in order, then what follows, until the turn ends. */
  async function* watchTurn(id: string, options: Parameters<StoreClient['watch']>[1] & object): AsyncGenerator<WatchEvent> {
    const pollMs = checkPollMs(options);
    let after = options.after ?? 0;
    const first = await pool.query(`SELECT status FROM ${s}.turns WHERE id = $1`, [id]);
    if (first.rows.length === 0) throw new Error(`store.watch: there is no turn '${id}'.`);
    for (;;) {
      if (options.signal?.aborted === true) return;
      // A compaction is not an event: it changes what later model requests carry, not what happened.
      const { rows } = await pool.query(
        `SELECT seq, kind, data FROM ${s}.log WHERE turn_id = $1 AND seq > $2 AND kind <> 'compaction' ORDER BY seq`,
        [id, after],
      );
      for (const r of rows) {
        const event = toWatchEvent(r);
        after = Number(r.seq);
        if (event === null) continue;
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
  }

  /**
   * Every turn of a thread in order, each turn's log as `watch` gives it (with the turn's id), then
   * what follows, until the thread is closed and its last turn has ended (the store's rules).
   */
  async function* watchThread(
    thread: string,
    options: Parameters<StoreClient['watch']>[1] & object,
  ): AsyncGenerator<ThreadWatchEvent> {
    const pollMs = checkPollMs(options);
    if (options.after !== undefined)
      throw new TypeError(
        'store.watch({ thread }) takes no `after`: it follows the whole thread (watch a turn by its id to start later).',
      );
    const found = await pool.query(`SELECT 1 FROM ${s}.threads WHERE id = $1`, [thread]);
    if (found.rows.length === 0) throw new Error(`store.watch: there is no thread '${thread}'.`);
    // Where the watch is: the turn (its seq) and the entry within it.
    let turn = 0;
    let after = 0;
    const NEXT_SQL = `SELECT t.id AS turn_id, t.seq AS turn_seq, l.seq, l.kind, l.data FROM ${s}.turns t JOIN ${s}.log l ON l.turn_id = t.id
      WHERE t.thread = $1 AND (t.seq > $2 OR (t.seq = $2 AND l.seq > $3)) AND l.kind <> 'compaction' ORDER BY t.seq, l.seq`;
    for (;;) {
      if (options.signal?.aborted === true) return;
      const { rows } = await pool.query(NEXT_SQL, [thread, turn, after]);
      for (const r of rows) {
        turn = Number(r.turn_seq);
        const event = toWatchEvent(r);
        after = Number(r.seq);
        if (event !== null) yield { ...event, turnId: String(r.turn_id) };
      }
      if (rows.length > 0) continue;
      // Done once the thread is closed, every turn has ended and its log has been read.
      const state = await pool.query(
        `SELECT th.closed_at IS NOT NULL AS closed,
           NOT EXISTS (SELECT 1 FROM ${s}.turns t WHERE t.thread = th.id AND t.ended_at IS NULL) AS ended
         FROM ${s}.threads th WHERE th.id = $1`,
        [thread],
      );
      const now = state.rows[0];
      if (now === undefined || (now.closed === true && now.ended === true)) {
        const late = await pool.query(`${NEXT_SQL} LIMIT 1`, [thread, turn, after]);
        if (late.rows.length === 0) return;
        continue;
      }
      await nap(pollMs, options.signal);
    }
  }

  return {
    kind: 'postgres',
    submit,
    get: get as StoreClient['get'],
    async list(options = {}) {
      const limit = checkList(options);
      const { rows } = await pool.query(
        `SELECT seq::text AS seq, id, agent, thread, status, ${ISO('created_at')}, ${ISO('updated_at')} FROM ${s}.turns
         WHERE ($1::text IS NULL OR status = $1) AND ($2::bigint IS NULL OR seq > $2::bigint) ORDER BY seq LIMIT $3`,
        [options.status ?? null, options.cursor ?? null, limit + 1],
      );
      const page = rows.slice(0, limit);
      return { turns: page.map(toTurnSummary), cursor: rows.length > limit ? String(page[page.length - 1]?.seq) : null };
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
        // A child turn's call is decided under its key (the path of transfer_task calls to it), as in the store.
        const { key } = activeKeys(state);
        const inbox = await tx.query(
          `SELECT call_id FROM ${s}.inbox WHERE turn_id = $1 AND kind = 'decision' AND call_id = ANY($2::text[])`,
          [id, parkedIds(state).map(key)],
        );
        const callIds = entries.map(([callId]) => callId);
        checkDecidable(id, state, new Set(inbox.rows.map((r) => splitKey(String(r.call_id)).callId)), callIds);
        for (const [callId, decision] of entries) {
          const inserted = await tx.query(
            `INSERT INTO ${s}.inbox (turn_id, kind, call_id, body) VALUES ($1, 'decision', $2, $3::jsonb) ON CONFLICT (turn_id, call_id) WHERE kind = 'decision' DO NOTHING RETURNING id`,
            [id, key(callId), JSON.stringify(decision)],
          );
          const inboxId = inserted.rows[0]?.id;
          if (inboxId === undefined) throw new CallAlreadyDecidedError(id, [callId]);
          // The decision's id (its inbox row) keys its message: it is sent once.
          await dbos.sendInTransaction(tx, id, { decision }, decisionTopic(key(callId)), `turnkit.decision:${id}:${inboxId}`);
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
        await cancelIn(tx, id, reason ?? 'cancelled by the caller');
        return true;
      });
    },

    async listThreads(options = {}): Promise<ThreadPage> {
      const { limit, cursor } = checkListThreads(options);
      const { rows } = await pool.query(
        `SELECT th.id, th.agent, ${ISO('th.created_at', 'created_at')}, ${ISO('th.closed_at', 'closed_at')},
           (SELECT count(*) FROM ${s}.turns n WHERE n.thread = th.id)::int AS turns, ${CURRENT_SQL(s)} AS current
         FROM ${s}.threads th WHERE $1::text IS NULL OR th.id > $1 ORDER BY th.id LIMIT $2`,
        [cursor, limit + 1],
      );
      const page = rows.slice(0, limit);
      return { threads: page.map(toThreadSummary), cursor: rows.length > limit ? String(page[page.length - 1]?.id) : null };
    },

    /** Closes the thread: no more turns, its grants end, and each of its turns that has not ended is cancelled. */
    async closeThread(thread: string, reason?: string) {
      if (reason !== undefined && typeof reason !== 'string')
        throw new TypeError('store.closeThread: `reason` must be a string.');
      const why = reason ?? 'the thread was closed';
      return transaction(pool, async (tx) => {
        // Locked as a submit locks it: a submit of this thread waits, then finds it closed.
        const { rows } = await tx.query(`SELECT closed_at FROM ${s}.threads WHERE id = $1 FOR UPDATE`, [thread]);
        const row = rows[0];
        if (row === undefined) throw new ThreadNotFoundError(thread);
        if (row.closed_at !== null) return false;
        await tx.query(`UPDATE ${s}.threads SET closed_at = now(), close_reason = $2, grants = '[]' WHERE id = $1`, [
          thread,
          why,
        ]);
        const open = await tx.query(`SELECT id FROM ${s}.turns WHERE thread = $1 AND ended_at IS NULL ORDER BY seq`, [thread]);
        for (const turn of open.rows) await cancelIn(tx, String(turn.id), why);
        return true;
      });
    },
    watch: ((
      ref: string | { readonly thread: string },
      options: Parameters<StoreClient['watch']>[1] & object = {},
    ): AsyncGenerator<WatchEvent | ThreadWatchEvent> => {
      if (typeof ref === 'object' && ref !== null) return watchThread(ref.thread, options);
      if (typeof ref !== 'string') throw new TypeError(`store.watch takes a turn id or { thread }, got ${JSON.stringify(ref)}.`);
      return watchTurn(ref, options);
    }) as StoreClient['watch'],
  };
}
