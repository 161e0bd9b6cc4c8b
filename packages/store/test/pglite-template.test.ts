// A new PGlite directory store, and an in-memory one, starts from the copy of a fresh cluster (src/db/pglite-template.ts):
// a store made from it holds turns like any other, and a copy that does not load costs nothing but
// time: it is removed, initdb makes the store, and a good copy replaces it.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { openStore } from '@turnkit/store';
import { afterAll, describe, expect, it } from 'vitest';
import { templateFile } from '../src/db/pglite-template.js';
import { openSql } from '../src/internal.js';

const base = mkdtempSync(join(tmpdir(), 'turnkit-template-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** Opens a new store in `name`, submits a turn, reopens it and reads the turn back. */
async function roundTrip(name: string): Promise<string | null | undefined> {
  const dir = join(base, name);
  const store = await openStore(dir);
  await store.submit({ agent: 'a', id: `turn-${name}`, input: 'hi' });
  await store.close();
  const again = await openStore(dir);
  try {
    return (await again.get(`turn-${name}`))?.input;
  } finally {
    await again.close();
  }
}

/**
 * Runs `work` with TMPDIR set to a new directory of this file's own, given where the copy of a fresh
 * cluster is kept there: a copy the test breaks or marks is never loaded by other files' stores.
 */
async function withOwnCopy(work: (file: string) => Promise<void>): Promise<void> {
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = mkdtempSync(join(base, 'tmp-'));
  try {
    const file = templateFile();
    if (file === null || !file.startsWith(process.env.TMPDIR)) throw new Error(`the copy's place did not follow TMPDIR: ${file}`);
    mkdirSync(dirname(file), { recursive: true });
    await work(file);
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
}

describe('a new PGlite directory store', () => {
  const file = templateFile();

  it('has a place for the copy, named by the PGlite version', () => {
    expect(file).toMatch(/turnkit-pglite[/\\]cluster-\d+\.\d+\.\d+[^/\\]*\.tar$/);
  });

  it('is made from the copy (written by the first new store) and holds its turns', async () => {
    expect(await roundTrip('first')).toBe('hi');
    expect(file !== null && existsSync(file)).toBe(true);
  });

  it('is made by initdb when the copy does not load, and the copy is made again', async () => {
    await withOwnCopy(async (file) => {
      writeFileSync(file, 'not a tar archive of a cluster');
      expect(await roundTrip('after-a-bad-copy')).toBe('hi');
      // A good copy again: a tar archive of a cluster (its PG_VERSION inside), megabytes long.
      expect(statSync(file).size).toBeGreaterThan(1_000_000);
      expect(readFileSync(file).includes('PG_VERSION')).toBe(true);
    });
  });

  it('runs with a buffer cache of 16 MB, not the 128 MB of its configuration (src/db/pglite.ts)', async () => {
    const sql = await openSql(join(base, 'buffers'));
    try {
      expect(await sql.query('SHOW shared_buffers')).toEqual([{ shared_buffers: '16MB' }]);
    } finally {
      await sql.close();
    }
  });
});

describe('an in-memory PGlite store (memory://)', () => {
  const file = templateFile();

  /** Opens an in-memory store, submits a turn and reads it back. */
  async function memoryRoundTrip(): Promise<string | null | undefined> {
    const store = await openStore('memory://');
    try {
      await store.submit({ agent: 'a', id: 'turn-memory', input: 'hi' });
      return (await store.get('turn-memory'))?.input;
    } finally {
      await store.close();
    }
  }

  it('is made from the copy: a table put in the copy is in the new store', async () => {
    if (file === null) throw new Error('no place for the copy');
    if (!existsSync(file)) await (await openStore('memory://')).close();
    const fresh = readFileSync(file);
    await withOwnCopy(async (marked) => {
      const db = new PGlite({ loadDataDir: new Blob([fresh]) });
      await db.query('CREATE TABLE copy_mark (n int)');
      writeFileSync(marked, Buffer.from(await (await db.dumpDataDir('none')).arrayBuffer()));
      await db.close();
      const sql = await openSql('memory://');
      try {
        expect(await sql.query(`SELECT to_regclass('public.copy_mark') IS NOT NULL AS marked`)).toEqual([{ marked: true }]);
      } finally {
        await sql.close();
      }
    });
  });

  it('holds its turns and runs with a buffer cache of 16 MB (its options reach PGlite)', async () => {
    expect(await memoryRoundTrip()).toBe('hi');
    const sql = await openSql('memory://');
    try {
      expect(await sql.query('SHOW shared_buffers')).toEqual([{ shared_buffers: '16MB' }]);
    } finally {
      await sql.close();
    }
  });

  it('is made by initdb when the copy does not load, and the copy is made again', async () => {
    await withOwnCopy(async (file) => {
      writeFileSync(file, 'not a tar archive of a cluster');
      expect(await memoryRoundTrip()).toBe('hi');
      expect(statSync(file).size).toBeGreaterThan(1_000_000);
      expect(readFileSync(file).includes('PG_VERSION')).toBe(true);
    });
  });
});
