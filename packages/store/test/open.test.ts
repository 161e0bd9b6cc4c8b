import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lockPath, openStore } from '@turnkit/store';

const dir = mkdtempSync(join(tmpdir(), 'turnkit-store-'));

describe('openStore', () => {
  const opened: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const s of opened) await s.close();
  });

  it('a PGlite directory serves one process: a live holder keeps it, a dead one is taken over, close gives it back', async () => {
    const data = join(dir, 'db');
    // A live process (a child that waits) holds the lock: refused, with the way out.
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      writeFileSync(lockPath(data), String(child.pid));
      await expect(openStore(data)).rejects.toThrow(
        new RegExp(`in use by process ${child.pid}.*use Postgres for several processes`),
      );
    } finally {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    // Now its process is gone: the lock is taken over.
    const store = await openStore(data);
    expect(existsSync(lockPath(data))).toBe(true);
    await expect(openStore(data)).rejects.toThrow(new RegExp(`in use by process ${process.pid}`));
    await store.close();
    expect(existsSync(lockPath(data))).toBe(false);
    // The data survives a reopen, and the schema is not migrated twice.
    const again = await openStore(`file://${data}`);
    opened.push(again);
    const id = await again.submit({ agent: 'a', id: 'kept' });
    expect((await again.get(id))?.status).toBe('ready');
  });

  it('a missing driver names the package to install', async () => {
    const load = async (name: string): Promise<never> => {
      throw new Error(`Cannot find package '${name}'`);
    };
    await expect(openStore('memory://', { load })).rejects.toThrow(
      /needs the package '@electric-sql\/pglite'.*npm install @electric-sql\/pglite/,
    );
    await expect(openStore('postgres://127.0.0.1:1/x', { load })).rejects.toThrow(/needs the package 'pg'.*npm install pg/);
  });

  it('rejects an unknown URL scheme and a bad schema name', async () => {
    await expect(openStore('mysql://x')).rejects.toThrow(/does not know the URL scheme/);
    await expect(openStore('memory://', { schema: 'Robert"; DROP' })).rejects.toThrow(/schema/);
  });
});
