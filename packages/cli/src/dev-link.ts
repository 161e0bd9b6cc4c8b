// The file `turnkit dev` writes in its store's directory (`turnkit-dev.json`: its address, its
// token, its pid and its agents; mode 0600, removed when it stops), by which the store commands of
// another terminal find it and go through its HTTP API instead of opening the PGlite store, which
// serves one process only. A file left by a process that is no longer running is ignored, with a
// line saying so.

import { chmodSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isAlive } from '@turnkit/store/internal';
import { safeText } from './safe-text.js';

/** The file's name in the store's directory. */
export const DEV_FILE = 'turnkit-dev.json';

/** What the file holds. */
export interface DevLink {
  /** The server's address, e.g. http://127.0.0.1:4700. */
  readonly url: string;
  /** The bearer token of its API. */
  readonly token: string;
  readonly pid: number;
  /** The agents its worker runs. */
  readonly agents: readonly string[];
}

/** True for a store URL that names a PGlite directory (not memory:// or a server). */
export function isDirectoryStore(url: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:\/\//i.test(url) || url.startsWith('file://');
}

function directoryOf(url: string): string {
  return resolve(url.startsWith('file://') ? new URL(url).pathname : url);
}

/** The path of the file for a directory store. */
export function devFilePath(url: string): string {
  return join(directoryOf(url), DEV_FILE);
}

/**
 * Writes the file for the store at `url` (written aside with mode 0600, then renamed into place, so
 * no one reads half of it). Returns its removal, which removes it only while it is still this process's.
 */
export function writeDevLink(url: string, link: DevLink): () => void {
  const path = devFilePath(url);
  const aside = `${path}.${process.pid}`;
  writeFileSync(aside, `${JSON.stringify(link, null, 2)}\n`, { mode: 0o600 });
  chmodSync(aside, 0o600); // the mode of a file that existed is not changed by writeFileSync
  renameSync(aside, path);
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    if (readLink(path)?.pid === process.pid) rmSync(path, { force: true });
  };
}

function readLink(path: string): DevLink | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  try {
    const value = JSON.parse(text) as Partial<DevLink> | null;
    if (
      typeof value?.url === 'string' &&
      /^http:\/\/[^/\s]+$/.test(value.url) &&
      typeof value.token === 'string' &&
      Number.isSafeInteger(value.pid) &&
      Array.isArray(value.agents) &&
      value.agents.every((a) => typeof a === 'string')
    )
      return value as DevLink;
  } catch {
    // Not JSON: said below.
  }
  process.stderr.write(`${safeText(`turnkit: ignoring ${path}: it is not a file turnkit dev wrote (remove it).`)}\n`);
  return null;
}

/**
 * The running `turnkit dev` that holds the store at `url`, or null: the store is not a directory,
 * has no file, or the file's process is no longer running (said on stderr, then ignored).
 */
export function findDevLink(url: string): DevLink | null {
  if (!isDirectoryStore(url)) return null;
  const path = devFilePath(url);
  const link = readLink(path);
  if (link === null) return null;
  if (link.pid === process.pid) return null;
  if (!isAlive(link.pid)) {
    process.stderr.write(
      `${safeText(`turnkit: ignoring ${path}: the turnkit dev that wrote it (process ${link.pid}) is no longer running; the store is opened directly.`)}\n`,
    );
    return null;
  }
  return link;
}
