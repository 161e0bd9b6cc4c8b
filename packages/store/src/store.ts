// The store: turns, their transcript and notices (the log), the tool journal and the inbox of
// decisions and cancels, in Postgres (or PGlite). Callers submit, read, decide and cancel; workers
// claim turns with a fenced lease and write each checkpoint as one compare-and-swap. Each part
// lives in its own module; this one opens the database and puts them together.

import type { ApprovalDecision, ToolResult } from '@turnkit/core';
import { armedCrash } from './crash.js';
import { cancelTurn, decideTurn, pendingInbox } from './inbox.js';
import { claimTurn, commitTurn, journalResult, journalStart, readJournal, renewLease } from './lease.js';
import { migrate } from './schema.js';
import { checkSchemaName, openPGlite, openPostgres, type ModuleLoader, type Sql } from './sql.js';
import { getTurn, listTurns, submitTurn } from './turns.js';
import type {
  Claim,
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

export { ConflictError, LeaseLostError } from './errors.js';

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
  const sql = await openUrl(url, schema, options.load);
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
  return {
    kind: sql.kind,
    submit: async (options) => submitTurn(db(), options),
    get: async (id) => getTurn(db(), id),
    list: async (options) => listTurns(db(), options),
    decide: async (id, decisions) => decideTurn(db(), id, decisions),
    cancel: async (id, reason) => cancelTurn(db(), id, reason),
    watch: (id, options = {}) => watchTurn(db(), id, options),
    async close() {
      if (closed) return;
      closed = true;
      await sql.close();
    },
    claim: async (options) => claimTurn(db(), options),
    renew: async (lease, leaseMs) => renewLease(db(), lease, leaseMs),
    commit: async (lease, commit) => commitTurn(db(), lease, commit),
    pendingInbox: async (lease) => pendingInbox(db(), lease),
    journal: async (lease, callIds) => readJournal(db(), lease, callIds),
    callStarted: async (lease, call) => journalStart(db(), lease, call),
    callFinished: async (lease, result) => journalResult(db(), lease, result),
  };
}
