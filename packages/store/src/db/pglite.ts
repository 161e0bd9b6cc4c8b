// PGlite, in memory or in a directory that serves one process (guarded by a lock file, lock.ts).

import { existsSync, lstatSync, mkdirSync, rmSync, type Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { loadDriver } from './driver.js';
import { realPath, takeLock } from './lock.js';
import { dropTemplate, readTemplate, templateFile, writeTemplate } from './pglite-template.js';
import type { ModuleLoader, Row, Sql } from './types.js';

interface PGliteLike {
  query(text: string, params?: unknown[]): Promise<{ rows: Row[] }>;
  transaction<T>(work: (tx: { query(text: string, params?: unknown[]): Promise<{ rows: Row[] }> }) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  dumpDataDir?(compression: 'none'): Promise<Blob>;
  waitReady?: Promise<void>;
}

interface PGliteOptions {
  loadDataDir?: Blob;
  startParams?: string[];
}

// PGlite's constructor takes (dataDir, options) or (options) alone: with an undefined dataDir it
// reads its first argument as the options and drops the second, so an in-memory PGlite is given its
// options as the only argument.
type PGliteClass = (new (
  dataDirOrOptions?: string | PGliteOptions,
  options?: PGliteOptions,
) => PGliteLike) & {
  readonly defaultStartParams?: readonly string[];
};

/**
 * PGlite's start parameters with a buffer cache of 16 MB instead of the cluster's 128 MB. Postgres
 * zeroes its shared memory at every start, in WebAssembly: a `turnkit ls` process on an existing
 * store spends 2.1 s of CPU instead of 2.6 s (1.6 s instead of 2.3 s with V8's baseline compiler
 * only, as the CLI tests run it). One process uses a PGlite store, so the cache serves one
 * connection; the operating system still caches the directory's files below it.
 */
function startParams(PGlite: PGliteClass): PGliteOptions {
  const defaults = PGlite.defaultStartParams;
  return defaults === undefined ? {} : { startParams: [...defaults, '-c', 'shared_buffers=16MB'] };
}

/**
 * Opens PGlite: in memory (`dataDir` undefined) or in a directory guarded by a lock file, since a
 * PGlite directory serves one process only.
 */
export async function openPGlite(dataDir: string | undefined, schema: string | undefined, load?: ModuleLoader): Promise<Sql> {
  const mod = (await loadDriver('@electric-sql/pglite', 'openStore() with PGlite', load)) as { PGlite: PGliteClass };
  let unlock: (() => void) | undefined;
  // PGlite gets the real path: it cannot open a directory through a symbolic link, and the lock
  // must be the same one whichever path names the directory.
  const dir = dataDir === undefined ? undefined : prepareDataDir(dataDir);
  if (dir !== undefined) unlock = takeLock(dir);
  let db: PGliteLike;
  try {
    db = await openCluster(mod.PGlite, dir);
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

/**
 * PGlite in `dir`, or in memory when `dir` is undefined. A directory that does not exist yet, and
 * every in-memory PGlite, is a new cluster: it starts from the copy of a fresh cluster when there is
 * one (pglite-template.ts), else initdb makes it and the copy is kept.
 */
async function openCluster(PGlite: PGliteClass, dir: string | undefined): Promise<PGliteLike> {
  const open = (options: PGliteOptions): PGliteLike => (dir === undefined ? new PGlite(options) : new PGlite(dir, options));
  const file = dir !== undefined && existsSync(dir) ? null : templateFile();
  if (file === null) return open(startParams(PGlite));
  const template = readTemplate(file);
  if (template !== null) {
    const db = open({ ...startParams(PGlite), loadDataDir: template });
    try {
      await db.waitReady;
      return db;
    } catch {
      // A copy that does not load: removed, and the store made by initdb in a clean directory.
      await db.close().catch(() => undefined);
      dropTemplate(file);
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    }
  }
  const db = open(startParams(PGlite));
  await db.waitReady;
  if (db.dumpDataDir !== undefined)
    await writeTemplate(file, () => (db.dumpDataDir as NonNullable<typeof db.dumpDataDir>)('none'));
  return db;
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
