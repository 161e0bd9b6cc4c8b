// The lock file of a PGlite directory: a PGlite directory serves one process only.

import { randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, realpathSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/** The lock file of a PGlite directory: `<dir>.lock` next to it (next to the real directory when a symbolic link names it). */
export function lockPath(dataDir: string): string {
  const full = realPath(dataDir);
  return join(dirname(full), `${basename(full)}.lock`);
}

/**
 * The absolute path with symbolic links resolved: the path's own when it exists, else its nearest
 * existing ancestor's with the rest appended (a directory PGlite will create).
 */
export function realPath(path: string): string {
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
  return createFileOnce(path, String(process.pid));
}

/**
 * Creates `path` holding `text`, in one step: the text is written and flushed to a file of this
 * process first, then hard-linked to `path`, which fails when `path` exists. So a file made this
 * way is never seen half-written, and of two processes creating it, one wins. False when it exists.
 * `mode` is the file's permissions (before the umask): 0o600 for a secret.
 */
export function createFileOnce(path: string, text: string, mode = 0o644): boolean {
  const aside = `${path}.${process.pid}.${randomUUID()}`;
  const fd = openSync(aside, 'w', mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
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

/** Whether a process with this pid exists (one of another user's included). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
