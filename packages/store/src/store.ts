// The store: turns, their transcript and notices (the log), the tool journal and the inbox of
// decisions and cancels, in Postgres (or PGlite). Callers submit, read, decide and cancel; workers
// claim turns with a fenced lease and write each checkpoint as one compare-and-swap. Each part
// lives in its own module; this one opens the database and puts them together.

import type { ApprovalDecision, ToolResult } from '@turnkit/core';
import { armedCrash } from './crash.js';
import { cancelTurn, decideTurn, pendingInbox } from './inbox.js';
import { claimTurns, nextDue, releaseLease } from './claim.js';
import { commitTurn } from './checkpoint.js';
import { type JournalRead, journalResult, journalStart, readJournal } from './journal.js';
import { renewLease } from './lease.js';
import { channelOf, type ListenHandlers } from './notify.js';
import { migrate } from './schema.js';
import { checkSchemaName, openPGlite, openPostgres, type ModuleLoader, type Sql } from './sql.js';
import { getTurn, listTurns, submitTurn } from './turns.js';
import type {
  Claim,
  ClaimManyOptions,
  ClaimOptions,
  Commit,
  DecideResult,
  Lease,
  ListOptions,
  PendingInbox,
  StoredTurn,
  SubmitOptions,
  TurnPage,
  WatchEvent,
  WatchOptions,
} from './types.js';
import { watchTurn } from './watch.js';

export {
  CallAlreadyDecidedError,
  ConflictError,
  LeaseLostError,
  TurnExistsError,
  TurnNotFoundError,
  TurnNotWaitingError,
  UnknownCallError,
} from './errors.js';

export interface OpenStoreOptions {
  /** A Postgres schema to keep the tables in (created if missing); default: the connection's search_path. */
  readonly schema?: string;
  /** How driver packages are imported (tests use it to see the message for a missing driver). */
  readonly load?: ModuleLoader;
  /**
   * Postgres only: how long opening keeps trying while the server refuses connections (starting,
   * stopping, restarting), in milliseconds. Default `OPEN_RETRY_MS` (10 s), for a worker its
   * supervisor restarts; 0 tries once (a command a person waits for).
   */
  readonly retryMs?: number;
}

export interface Store {
  /** `pglite` or `postgres`. */
  readonly kind: 'pglite' | 'postgres';
  /** Queues a turn for a worker with that agent; returns its id. */
  submit(options: SubmitOptions): Promise<string>;
  /** The turn, or null when there is none with that id. */
  get(id: string): Promise<StoredTurn | null>;
  list(options?: ListOptions): Promise<TurnPage>;
  /**
   * Decides parked calls; durable when it resolves. All or nothing: throws TurnNotFoundError,
   * TurnNotWaitingError, UnknownCallError (a call id the turn has not parked) or
   * CallAlreadyDecidedError (the first decision per call stands) and then stores none of them.
   */
  decide(id: string, decisions: Record<string, ApprovalDecision>): Promise<DecideResult>;
  /** Asks for the turn to be cancelled; durable when it resolves. False when the turn has already ended. */
  cancel(id: string, reason?: string): Promise<boolean>;
  /** What happens to the turn: its history, then new rows as they are written, until it ends. */
  watch(id: string, options?: WatchOptions): AsyncIterable<WatchEvent>;
  close(): Promise<void>;

  // The lease API (workers use it).
  /** Claims the oldest runnable turn (see claimMany). */
  claim(options: ClaimOptions): Promise<Claim | null>;
  /** Claims up to `limit` runnable turns, oldest first, in one statement (FOR UPDATE SKIP LOCKED); `caps` limit agents across workers. */
  claimMany(options: ClaimManyOptions): Promise<Claim[]>;
  /** Hands a held turn back (fenced): its lease ends now and workers are woken to take it. */
  release(lease: Lease): Promise<void>;
  /**
   * Milliseconds until a waiting turn becomes claimable, or null if none waits: `'any'` (default)
   * counts retries falling due and leases expiring, `'retries'` only retries.
   */
  nextDue(what?: 'any' | 'retries'): Promise<number | null>;
  /**
   * Hears when a turn may have become runnable: from this process, and on Postgres from every
   * process (LISTEN/NOTIFY on a connection that reconnects). Resolves to the stop.
   */
  listen(handlers: ListenHandlers): Promise<() => Promise<void>>;
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

/** Opens the database a URL names (see openStore). */
async function openUrl(url: string | undefined, schema: string | undefined, load: ModuleLoader | undefined): Promise<Sql> {
  if (url !== undefined && (typeof url !== 'string' || url === ''))
    throw new TypeError(`openStore takes 'memory://', 'postgres://…', a directory, or nothing; got ${JSON.stringify(url)}.`);
  if (url === undefined) return openPGlite('./.turnkit', schema, load);
  if (url === 'memory://') return openPGlite(undefined, schema, load);
  if (/^postgres(ql)?:\/\//.test(url)) return openPostgres(url, schema, load);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) && !url.startsWith('file://')) {
    throw new TypeError(
      `openStore does not know the URL scheme of ${JSON.stringify(url)}: use 'memory://', 'postgres://…', a directory, or nothing.`,
    );
  }
  return openPGlite(url.startsWith('file://') ? new URL(url).pathname : url, schema, load);
}

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
  return createStore(await openSql(url, options));
}

/**
 * Opens the database a URL names (as openStore does) and migrates it, returning the connection
 * itself: for tools that measure or inspect the tables. `createStore(sql)` makes a store over it.
 */
export async function openSql(url?: string, options: OpenStoreOptions = {}): Promise<Sql> {
  armedCrash(); // a bad TURNKIT_STORE_CRASH_AT is an error now, not at a crash point
  const schema = options.schema === undefined ? undefined : checkSchemaName(options.schema);
  const retryMs = options.retryMs ?? OPEN_RETRY_MS;
  if (typeof retryMs !== 'number' || !Number.isFinite(retryMs) || retryMs < 0)
    throw new RangeError(`openStore option \`retryMs\` must be a number of milliseconds >= 0, got ${String(retryMs)}.`);
  const started = Date.now();
  for (;;) {
    try {
      return await openAndMigrate(url, schema, options.load);
    } catch (error) {
      // A Postgres starting, stopping or restarting refuses connections for a moment: a process
      // started then (a worker its supervisor restarts) waits for it rather than exiting.
      if (!restarting(error) || Date.now() - started >= retryMs) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** How long opening a Postgres store keeps trying while the server refuses connections, by default (`retryMs`). */
export const OPEN_RETRY_MS = 10_000;

/** Postgres is starting, stopping or restarting (SQLSTATE class 57P), or its port refuses connections now. */
function restarting(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('57P') || code === 'ECONNREFUSED' || code === 'ECONNRESET');
}

async function openAndMigrate(url: string | undefined, schema: string | undefined, load: ModuleLoader | undefined): Promise<Sql> {
  const sql = await openUrl(url, schema, load);
  try {
    await migrate(sql);
  } catch (error) {
    await sql.close().catch(() => undefined);
    throw error;
  }
  return sql;
}

/** A store over any `Sql` connection (the schema must be migrated). */
export function createStore(sql: Sql): Store {
  let closed = false;
  const db = (): Sql => {
    if (closed) throw new Error('This store is closed; open a new one with openStore().');
    return sql;
  };
  // The notification channel is the schema's; read once, when a worker first listens.
  let channelRead: Promise<string> | null = null;
  const channel = (): Promise<string> =>
    (channelRead ??= db()
      .query('SELECT current_schema() AS schema')
      .then(([row]) => channelOf(String(row?.schema ?? 'public'))));
  const known = new KnownReads();
  // In-process wake-ups for PGlite, which has no other (on Postgres, NOTIFY reaches this process's workers too).
  const listeners = new Set<ListenHandlers>();
  const wake = <T>(value: T, really = true): T => {
    if (really && sql.listen === undefined) for (const l of listeners) quietly(l.onNotify);
    return value;
  };
  return {
    kind: sql.kind,
    submit: async (options) => wake(await submitTurn(db(), options)),
    get: async (id) => getTurn(db(), id),
    list: async (options) => listTurns(db(), options),
    decide: async (id, decisions) => {
      const result = await decideTurn(db(), id, decisions);
      return wake(result, result.accepted.length > 0);
    },
    cancel: async (id, reason) => wake(await cancelTurn(db(), id, reason)),
    watch: (id, options = {}) => watchTurn(db(), id, options),
    async close() {
      if (closed) return;
      closed = true;
      listeners.clear();
      await sql.close();
    },
    claim: async (options) => known.claimed(await claimTurns(db(), { ...options, limit: 1 }))[0] ?? null,
    claimMany: async (options) => known.claimed(await claimTurns(db(), options)),
    release: async (lease) => void wake(await releaseLease(db(), lease)),
    nextDue: async (what = 'any') => nextDue(db(), what),
    async listen(handlers) {
      listeners.add(handlers);
      const stop = sql.listen === undefined ? null : await sql.listen(await channel(), handlers);
      return async () => {
        listeners.delete(handlers);
        await stop?.();
      };
    },
    renew: async (lease, leaseMs) => renewLease(db(), lease, leaseMs),
    commit: async (lease, commit) => {
      known.forget(lease);
      const journal = await commitTurn(db(), lease, commit);
      known.committed(lease, commit, journal);
      wake(undefined, commit.release === true && commit.retryAfterMs === undefined);
    },
    pendingInbox: async (lease) => known.takeInbox(lease) ?? pendingInbox(db(), lease),
    journal: async (lease, callIds) => known.takeJournal(lease, callIds) ?? readJournal(db(), lease, callIds),
    callStarted: async (lease, call) => {
      known.forget(lease);
      await journalStart(db(), lease, call);
    },
    callFinished: async (lease, result) => {
      known.forget(lease);
      return journalResult(db(), lease, result);
    },
  };
}

/**
 * Reads a worker would make whose answer an earlier statement already returned: the pending inbox
 * its claim read (the look for a cancel at the start, and for decisions when the turn is parked),
 * and the journal of the batch a checkpoint starts (read by the checkpoint itself). Each answers
 * only the lease it was read for and is forgotten at that lease's next write, so an answer never
 * predates the lease's own last write. A row that arrives later is found by the next read, or
 * keeps the turn runnable when it is released (see checkpoint.ts).
 */
class KnownReads {
  private readonly inbox = new WeakMap<Lease, readonly PendingInbox[]>();
  private readonly journals = new WeakMap<Lease, { readonly callIds: ReadonlySet<string>; readonly read: JournalRead }>();

  claimed(claims: Claim[]): Claim[] {
    for (const claim of claims) this.inbox.set(claim.lease, claim.pending);
    return claims;
  }

  committed(lease: Lease, commit: Commit, journal: JournalRead | null): void {
    const calls = commit.state?.batch?.calls;
    if (journal !== null && calls !== undefined)
      this.journals.set(lease, { callIds: new Set(calls.map((c) => c.id)), read: journal });
  }

  forget(lease: Lease): void {
    this.journals.delete(lease);
    this.inbox.delete(lease);
  }

  /** The claim's inbox rows, until the lease's first write (a worker takes each row once: it keeps what it took). */
  takeInbox(lease: Lease): PendingInbox[] | null {
    const rows = this.inbox.get(lease);
    return rows === undefined ? null : [...rows];
  }

  takeJournal(lease: Lease, callIds: readonly string[]): JournalRead | null {
    const known = this.journals.get(lease);
    this.journals.delete(lease);
    if (known === undefined || !callIds.every((id) => known.callIds.has(id))) return null;
    const wanted = new Set(callIds);
    return {
      results: known.read.results.filter((r) => wanted.has(r.callId)),
      started: known.read.started.filter((id) => wanted.has(id)),
    };
  }
}

/** Calls a listener; one that throws must not break a store call. */
function quietly(fn: () => void): void {
  try {
    fn();
  } catch {
    // ignored on purpose
  }
}
