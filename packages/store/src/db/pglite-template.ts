// A new PGlite directory store, and every in-memory one (`memory://`), starts from a copy of a
// fresh cluster instead of running initdb. initdb is most of the cost of a new store: a fresh
// process that opens one takes 10.7 s of CPU here against 5.2 s from the copy, 15.2 s against 7.8 s
// of wall time (`pnpm bench --store`, docs/benchmarks.md, "A new PGlite store"), which a user pays
// at the first `turnkit run --store`, `turnkit dev` or `openStore(dir)`; an in-memory store opened
// in a process that has opened one before takes about 1.1 s of CPU against 3.5 s. The copy is
// PGlite's own `dumpDataDir` of a cluster that initdb has just made, kept in the temporary directory
// under the PGlite version; the first new store of a machine makes it. It is a cache: when it cannot
// be read, written or loaded, the store is made by initdb as before, and a copy that fails to load
// is removed.

import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Where the copy of a fresh cluster of this PGlite version is kept, or null when the version cannot be read. */
export function templateFile(): string | null {
  try {
    const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
    // <package>/dist/index.cjs: the version is in <package>/package.json.
    const manifest = JSON.parse(readFileSync(join(dirname(dirname(entry)), 'package.json'), 'utf8')) as { version?: unknown };
    if (typeof manifest.version !== 'string' || !/^[0-9A-Za-z.+-]+$/.test(manifest.version)) return null;
    return join(tmpdir(), 'turnkit-pglite', `cluster-${manifest.version}.tar`);
  } catch {
    return null;
  }
}

/** The copy, or null when there is none (or it cannot be read). */
export function readTemplate(file: string): Blob | null {
  try {
    return new Blob([readFileSync(file)]);
  } catch {
    return null;
  }
}

/** Keeps `dump` as the copy; written to a file of its own and renamed, so a reader never sees half of it. */
export async function writeTemplate(file: string, dump: () => Promise<Blob>): Promise<void> {
  const partial = `${file}.${randomUUID()}.partial`;
  try {
    const bytes = Buffer.from(await (await dump()).arrayBuffer());
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(partial, bytes);
    renameSync(partial, file);
  } catch {
    rmSync(partial, { force: true });
  }
}

/** Removes a copy that failed to load, so the next new store runs initdb and makes a good one. */
export function dropTemplate(file: string): void {
  rmSync(file, { force: true });
}
