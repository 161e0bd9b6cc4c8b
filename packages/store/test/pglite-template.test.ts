// A new PGlite directory store starts from the copy of a fresh cluster (src/db/pglite-template.ts):
// a store made from it holds turns like any other, and a copy that does not load costs nothing but
// time: it is removed, initdb makes the store, and a good copy replaces it.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
    if (file === null) throw new Error('no place for the copy');
    writeFileSync(file, 'not a tar archive of a cluster');
    expect(await roundTrip('after-a-bad-copy')).toBe('hi');
    // A good copy again: a tar archive of a cluster (its PG_VERSION inside), megabytes long.
    expect(statSync(file).size).toBeGreaterThan(1_000_000);
    expect(readFileSync(file).includes('PG_VERSION')).toBe(true);
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
