// The one seam between the store and a database: run a statement, run a transaction. The same
// SQL runs on both drivers (PGlite in-process, a real Postgres through `pg`); each is an optional
// peer dependency, loaded only when a store of its kind is opened.

import { createHash, randomUUID } from 'node:crypto';
import {
  linkSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  type Stats,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { listenPostgres, type ClientFactory, type ListenHandlers } from './notify.js';

/** A row as the driver returns it (jsonb parsed, text as strings). */
export type Row = Record<string, unknown>;

/** Runs statements; `params` are bound as $1, $2, … */
export interface SqlQuery {
  query(text: string, params?: readonly unknown[]): Promise<Row[]>;
}

/** A database connection the store can use: statements, transactions, and closing. */
export interface Sql extends SqlQuery {
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: SqlQuery) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** `pglite` or `postgres`: what `openStore` opened. */
  readonly kind: 'pglite' | 'postgres';
  /** Postgres only: LISTENs on `channel` over a connection of its own that reconnects; resolves to the stop. */
  readonly listen?: (channel: string, handlers: ListenHandlers) => Promise<() => Promise<void>>;
}

/** Loads a driver module; tests replace it to see the message for a missing driver. */
export type ModuleLoader = (name: string) => Promise<unknown>;

const defaultLoader: ModuleLoader = (name) => import(name);

/** Imports an optional peer dependency, or throws an Error that says which package to install. */
export async function loadDriver(name: string, what: string, load: ModuleLoader = defaultLoader): Promise<unknown> {
  try {
    return await load(name);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    const code = (error as NodeJS.ErrnoException | null)?.code;
    const missing = code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' || /Cannot find (package|module)/.test(why);
    throw new Error(
      missing
        ? `${what} needs the package '${name}', which is not installed. Install it next to @turnkit/store: npm install ${name}`
        : `${what} needs the package '${name}', which is installed but could not be loaded (${why}). Reinstall it: npm install ${name}`,
    );
  }
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Checks a Postgres schema name (it is written into SQL, so only plain lower-case names pass). */
export function checkSchemaName(schema: string): string {
  if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema)) {
    throw new TypeError(
      `openStore option \`schema\` must be a plain lower-case name (letters, digits, '_', up to 63), got ${JSON.stringify(schema)}.`,
    );
  }
  return schema;
}

interface PGliteLike {
  query(text: string, params?: unknown[]): Promise<{ rows: Row[] }>;
  transaction<T>(work: (tx: { query(text: string, params?: unknown[]): Promise<{ rows: Row[] }> }) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  waitReady?: Promise<void>;
}

/**
 * Opens PGlite: in memory (`dataDir` undefined) or in a directory guarded by a lock file, since a
 * PGlite directory serves one process only.
 */
export async function openPGlite(dataDir: string | undefined, schema: string | undefined, load?: ModuleLoader): Promise<Sql> {
  const mod = (await loadDriver('@electric-sql/pglite', 'openStore() with PGlite', load)) as {
    PGlite: new (dataDir?: string) => PGliteLike;
  };
  let unlock: (() => void) | undefined;
  // PGlite gets the real path: it cannot open a directory through a symbolic link, and the lock
  // must be the same one whichever path names the directory.
  const dir = dataDir === undefined ? undefined : prepareDataDir(dataDir);
  if (dir !== undefined) unlock = takeLock(dir);
  let db: PGliteLike;
  try {
    db = dir === undefined ? new mod.PGlite() : new mod.PGlite(dir);
    await db.waitReady;
    if (schema !== undefined) {
      await db.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await db.query(`SET search_path TO ${schema}`);
    }
  } catch (error) {
    unlock?.();
    throw dir === undefined ? error : cannotOpen(dir, error);
  }
  const rows = async (promise: Promise<{ rows: Row[] }>): Promise<Row[]> => (await promise).rows;
  return {
    kind: 'pglite',
    query: (text, params) => rows(db.query(text, params === undefined ? undefined : [...params])),
    transaction: (work) =>
      db.transaction((tx) =>
        work({ query: (text, params) => rows(tx.query(text, params === undefined ? undefined : [...params])) }),
      ),
    async close() {
      try {
        await db.close();
      } finally {
        unlock?.();
      }
    },
  };
}

/** The lock file of a PGlite directory: `<dir>.lock` next to it (next to the real directory when a symbolic link names it). */
export function lockPath(dataDir: string): string {
  const full = realPath(dataDir);
  return join(dirname(full), `${basename(full)}.lock`);
}

/**
 * The absolute path with symbolic links resolved: the path's own when it exists, else its nearest
 * existing ancestor's with the rest appended (a directory PGlite will create).
 */
function realPath(path: string): string {
  const full = resolve(path);
  try {
    return realpathSync(full);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const parent = dirname(full);
    if ((code !== 'ENOENT' && code !== 'ENOTDIR') || parent === full) return full;
    return join(realPath(parent), basename(full));
  }
}

/** Resolves a PGlite directory and creates its parent; throws an error naming the path when it cannot be one. */
function prepareDataDir(dataDir: string): string {
  const dir = realPath(dataDir);
  let stat: Stats | null;
  try {
    stat = lstatSync(dir);
  } catch {
    stat = null; // missing (PGlite makes it), or under a file (mkdir below says so)
  }
  // realPath keeps a symbolic link only when its target is missing.
  if (stat?.isSymbolicLink())
    throw new Error(
      `The PGlite store path ${resolve(dataDir)} is a symbolic link to a missing directory; create its target or remove the link.`,
    );
  if (stat !== null && !stat.isDirectory())
    throw new Error(
      `The PGlite store path ${resolve(dataDir)} is a file, not a directory: name a directory (created if missing), or remove the file.`,
    );
  if (stat === null) {
    try {
      mkdirSync(dirname(dir), { recursive: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const why =
        code === 'EEXIST' || code === 'ENOTDIR'
          ? 'a part of it is a file, not a directory'
          : code === 'EACCES' || code === 'EPERM'
            ? `this process may not create ${dirname(dir)}`
            : (error as Error).message;
      throw new Error(
        `The PGlite store path ${resolve(dataDir)} cannot be created (${why}); name a directory this process may write.`,
      );
    }
  }
  return dir;
}

/** What PGlite's file errors mean (they carry an Emscripten errno and no message). */
const PGLITE_ERRNO: Record<number, string> = {
  2: 'permission denied',
  63: 'operation not permitted',
  44: 'not found',
  54: 'a part of it is not a directory',
  31: 'it is a directory where a file was expected',
  20: 'it exists already',
  69: 'read-only file system',
  51: 'no space left on the device',
  32: 'too many symbolic links',
};

/** PGlite's error for a directory it could not open, as an error naming the directory and what to do. */
function cannotOpen(dir: string, error: unknown): unknown {
  const errno = (error as { name?: unknown; errno?: unknown } | null)?.errno;
  if ((error as { name?: unknown } | null)?.name !== 'ErrnoError' || typeof errno !== 'number') return error;
  const why = PGLITE_ERRNO[errno] ?? `file system error ${errno}`;
  return new Error(
    `PGlite could not open the store directory ${dir} (${why}): name a directory this process may read and write, holding a PGlite store or empty.`,
    { cause: error },
  );
}

/**
 * Takes the lock of a PGlite directory: `<dir>.lock` holding this process's pid. A live process's
 * lock is never taken; a dead one's is taken over. Returns the unlock.
 *
 * The lock file is created with its content in one step (written aside, then hard-linked into
 * place, which fails if it exists), so no one ever reads a half-made lock; a dead holder's lock is
 * moved aside atomically and checked before it is deleted, so two processes taking over the same
 * stale lock cannot delete each other's new one.
 */
export function takeLock(dataDir: string): () => void {
  const path = lockPath(dataDir);
  for (let attempt = 0; attempt < 5; attempt += 1) {
    if (createLock(path)) {
      let released = false;
      return () => {
        if (released) return;
        released = true;
        if (readPid(path) === process.pid) rmSync(path, { force: true });
      };
    }
    const holder = readPid(path);
    if (holder !== null && isAlive(holder)) {
      throw new Error(
        `The PGlite store in ${realPath(dataDir)} is in use by process ${holder} (lock file ${path}). PGlite serves one process only: ` +
          'stop that process, or use Postgres for several processes (openStore("postgres://…")).',
      );
    }
    removeStale(path, holder);
  }
  throw new Error(
    `Could not take the lock file ${path}: other processes keep taking it. Use Postgres for several processes (openStore("postgres://…")).`,
  );
}

/** Creates the lock file with this pid in it, in one step; false when a lock file exists. */
function createLock(path: string): boolean {
  const aside = `${path}.${process.pid}.${randomUUID()}`;
  writeFileSync(aside, String(process.pid));
  try {
    linkSync(aside, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    rmSync(aside, { force: true });
  }
}

/** Deletes a dead holder's lock: moved aside first, deleted only if it is still that holder's, else put back. */
export function removeStale(path: string, stale: number | null): void {
  const aside = `${path}.${process.pid}.${randomUUID()}`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // someone else removed it
    throw error;
  }
  if (readPid(aside) !== stale) {
    // Another process took the lock over meanwhile: give it back (unless yet another one exists).
    try {
      linkSync(aside, path);
    } catch {
      // EEXIST: a newer lock is in place; it stands.
    }
  }
  rmSync(aside, { force: true });
}

function readPid(path: string): number | null {
  try {
    const text = readFileSync(path, 'utf8').trim();
    const pid = Number(text);
    return /^\d+$/.test(text) && Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A statement for `pg`: one with parameters is named, so each connection parses and plans it once and reuses the plan. */
interface PgQuery {
  readonly text: string;
  readonly values?: unknown[];
  readonly name?: string;
}

const names = new Map<string, string>();

function prepared(text: string, params: readonly unknown[] | undefined): PgQuery {
  if (params === undefined || params.length === 0) return { text };
  let name = names.get(text);
  if (name === undefined) {
    name = `turnkit_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    if (names.size < 1000) names.set(text, name);
  }
  return { text, values: [...params], name };
}

interface PgPoolLike {
  query(query: PgQuery | string): Promise<{ rows: Row[] }>;
  connect(): Promise<{
    query(query: PgQuery | string): Promise<{ rows: Row[] }>;
    release(error?: Error | boolean): void;
    on(event: 'error', listener: (error: Error) => void): unknown;
    off(event: 'error', listener: (error: Error) => void): unknown;
  }>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** Opens a pool of connections to a real Postgres through `pg`. */
export async function openPostgres(url: string, schema: string | undefined, load?: ModuleLoader): Promise<Sql> {
  type PgModule = { Pool: new (config: object) => PgPoolLike; Client: new (config: object) => ReturnType<ClientFactory> };
  const mod = (await loadDriver('pg', 'openStore("postgres://…")', load)) as Partial<PgModule> & { default?: PgModule };
  const Pool = mod.Pool ?? mod.default?.Pool;
  const Client = mod.Client ?? mod.default?.Client;
  if (Pool === undefined || Client === undefined)
    throw new Error("The installed 'pg' package has no Pool or Client export; install pg >= 8.");
  // keepAlive: a connection cut by the network (not closed by the server) is found dead, not waited on forever.
  const config: { connectionString: string; max: number; keepAlive: boolean; connectionTimeoutMillis: number; options?: string } =
    {
      connectionString: url,
      max: 10,
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
    };
  if (schema !== undefined) {
    // Create the schema once, then every connection of the pool uses it.
    const setup = new Pool({ connectionString: url, max: 1 });
    setup.on('error', () => undefined);
    try {
      await setup.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    } finally {
      await setup.end();
    }
    config.options = `-c search_path=${schema}`;
  }
  const pool = new Pool(config);
  // An idle connection that drops must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  const rows = async (promise: Promise<{ rows: Row[] }>): Promise<Row[]> => (await promise).rows;
  return {
    kind: 'postgres',
    query: (text, params) => rows(pool.query(prepared(text, params))),
    async transaction(work) {
      const client = await pool.connect();
      let broken = false;
      // A connection that drops between two statements of the transaction (Postgres restarting) must
      // not crash the process: the next statement fails, and the connection is not given back.
      const dropped = (): void => {
        broken = true;
      };
      client.on('error', dropped);
      try {
        await client.query('BEGIN');
        const result = await work({
          query: (text, params) => rows(client.query(prepared(text, params))),
        });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        try {
          await client.query('ROLLBACK');
        } catch {
          broken = true;
        }
        throw error;
      } finally {
        client.off('error', dropped);
        client.release(broken);
      }
    },
    close: () => pool.end(),
    listen: (channel, handlers) => listenPostgres(() => new Client(config), channel, handlers),
  };
}
