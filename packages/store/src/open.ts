// Opening a store: the database a URL names, its schema brought up to date, and the store over it:
// the client (client/) and the lease API its workers use (worker/leases.ts), over one connection.

import type { StoreClient } from './client/types.js';
import { createClient } from './client/client.js';
import { armedCrash } from './crash.js';
import { checkSchemaName } from './db/driver.js';
import { wakeups } from './db/notify.js';
import { openPGlite } from './db/pglite.js';
import { openPostgres } from './db/postgres.js';
import type { ModuleLoader, Sql } from './db/types.js';
import { migrate } from './schema/migrate.js';
import { createLeases } from './worker/leases.js';
import type { Leases } from './worker/types.js';

/** The options of `openStore`, after its URL. */
export interface OpenStoreOptions {
  /** A Postgres schema to keep the tables in (created if missing); default: the connection's search_path. */
  readonly schema?: string;
  /** How driver packages are imported (tests use it to see the message for a missing driver). */
  readonly load?: ModuleLoader;
  /**
   * Postgres only: how long opening keeps trying while the server refuses connections (starting,
   * stopping, restarting), in milliseconds. Default 10 s, for a worker its supervisor restarts; 0
   * tries once (a command a person waits for).
   */
  readonly retryMs?: number;
}

/**
 * A store: the client (submit, get, list, decide, cancel, watch) and the lease API its workers use
 * (claims, renewals, fenced writes), over one connection. Pass it to `createWorker`.
 */
export interface Store extends StoreClient, Leases {}

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

/**
 * Postgres is starting, stopping or restarting (SQLSTATE class 57P), its port refuses connections
 * now, or it closed the connection while the store was being opened (`pg` reports that without a
 * code, only by these messages).
 */
function restarting(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code.startsWith('57P') || code === 'ECONNREFUSED' || code === 'ECONNRESET';
  const message = error instanceof Error ? error.message : '';
  return CONNECTION_LOST.some((text) => message.includes(text));
}

const CONNECTION_LOST = ['Connection terminated unexpectedly', 'Client has encountered a connection error and is not queryable'];

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

/** A store over a migrated connection (`openSql`): the client and the lease API, closed together. */
export function createStore(sql: Sql): Store {
  let closed = false;
  const db = (): Sql => {
    if (closed) throw new Error('This store is closed; open a new one with openStore().');
    return sql;
  };
  const wake = wakeups(sql, db);
  return {
    kind: sql.kind,
    ...createClient(db, wake),
    ...createLeases(db, wake),
    async close() {
      if (closed) return;
      closed = true;
      wake.clear();
      await sql.close();
    },
  };
}
