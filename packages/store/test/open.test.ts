import { spawn } from 'node:child_process';
import { type AddressInfo, connect, createServer } from 'node:net';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '@turnkit/store';
import { lockPath, removeStale } from '../src/db/lock.js';
import { OPEN_RETRY_MS } from '../src/open.js';
import { dropSchema, POSTGRES_URL, scratchSchema } from './postgres.js';
import { nodeScript } from './node-script.js';

const dir = mkdtempSync(join(tmpdir(), 'turnkit-store-'));
const TAKE = fileURLToPath(new URL('./fixtures/take-lock.ts', import.meta.url));
const REPO = fileURLToPath(new URL('../../../', import.meta.url));

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

  it("processes racing to take over a dead process's lock: exactly one takes it, the others are refused", async () => {
    const data = join(dir, 'race');
    const dead = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await new Promise((resolve) => dead.once('exit', resolve));
    writeFileSync(lockPath(data), String(dead.pid)); // left by a process that is gone
    const startAt = Date.now() + 4000;
    const children = Array.from({ length: 4 }, () =>
      spawn(process.execPath, [nodeScript(TAKE), data, String(startAt)], {
        cwd: REPO,
        stdio: ['pipe', 'pipe', 'inherit'],
      }),
    );
    const said = await Promise.all(
      children.map(
        (child) =>
          new Promise<string>((resolve) => {
            let out = '';
            child.stdout?.on('data', (chunk: Buffer) => {
              out += chunk.toString('utf8');
              if (out.includes('\n')) resolve(out.trim());
            });
            child.once('exit', () => resolve(out.trim()));
          }),
      ),
    );
    const holders = children.filter((_, i) => said[i] === 'took');
    expect(holders).toHaveLength(1);
    expect(said.filter((s) => s !== 'took')).toEqual(
      Array(3).fill(expect.stringMatching(`^refused .*in use by process ${holders[0]?.pid}`)),
    );
    expect(readFileSync(lockPath(data), 'utf8')).toBe(String(holders[0]?.pid));
    for (const child of children) child.stdin?.end();
    await Promise.all(
      children.map((child) => new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)))),
    );
  }, 60_000);

  it('a takeover that finds the stale lock already replaced by a live process puts that lock back', async () => {
    // The interleaving the race above can hit: this process read a dead holder's pid, then another
    // process took the lock over, then this process removes "the stale lock".
    const data = join(dir, 'interleaved');
    const dead = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await new Promise((resolve) => dead.once('exit', resolve));
    const live = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      writeFileSync(lockPath(data), String(live.pid));
      removeStale(lockPath(data), dead.pid ?? null);
      expect(readFileSync(lockPath(data), 'utf8')).toBe(String(live.pid));
      await expect(openStore(data)).rejects.toThrow(new RegExp(`in use by process ${live.pid}`));
      // The dead holder's own lock is removed.
      writeFileSync(lockPath(data), String(dead.pid));
      removeStale(lockPath(data), dead.pid ?? null);
      expect(existsSync(lockPath(data))).toBe(false);
    } finally {
      live.kill('SIGKILL');
      await new Promise((resolve) => live.once('exit', resolve));
    }
  });

  it('a PGlite directory opened through a symbolic link is the real one: same data, same lock', async () => {
    const real = join(dir, 'real');
    const link = join(dir, 'link');
    mkdirSync(real);
    symlinkSync(real, link);
    expect(lockPath(link)).toBe(lockPath(real));
    const store = await openStore(link);
    try {
      await store.submit({ agent: 'a', id: 'through-the-link' });
      expect(readFileSync(lockPath(real), 'utf8')).toBe(String(process.pid));
      await expect(openStore(real)).rejects.toThrow(new RegExp(`${real} is in use by process ${process.pid}`));
    } finally {
      await store.close();
    }
    expect(existsSync(lockPath(real))).toBe(false);
    const again = await openStore(real);
    opened.push(again);
    expect((await again.get('through-the-link'))?.status).toBe('ready');
    // A directory not made yet under a linked parent is locked (and made) at its real path.
    mkdirSync(join(dir, 'parent'));
    symlinkSync(join(dir, 'parent'), join(dir, 'parent-link'));
    expect(lockPath(join(dir, 'parent-link', 'db'))).toBe(join(dir, 'parent', 'db.lock'));
  });

  it('a PGlite path that cannot be a store directory is an error naming it and saying what to do', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'not a database');
    await expect(openStore(file)).rejects.toThrow(
      `The PGlite store path ${file} is a file, not a directory: name a directory (created if missing), or remove the file.`,
    );
    await expect(openStore(join(file, 'db'))).rejects.toThrow(
      `The PGlite store path ${join(file, 'db')} cannot be created (a part of it is a file, not a directory)`,
    );
    symlinkSync(join(dir, 'gone'), join(dir, 'dangling'));
    await expect(openStore(join(dir, 'dangling'))).rejects.toThrow(
      /is a symbolic link to a missing directory; create its target/,
    );
    // A directory PGlite may not write (PGlite checks the mode bits itself, so this holds for root too).
    const readOnly = join(dir, 'read-only');
    mkdirSync(readOnly, { mode: 0o500 });
    try {
      await expect(openStore(readOnly)).rejects.toThrow(
        `PGlite could not open the store directory ${readOnly} (permission denied): name a directory this process may read and write`,
      );
    } finally {
      chmodSync(readOnly, 0o700);
    }
    expect(existsSync(lockPath(readOnly))).toBe(false);
  });

  it('a missing driver names the package to install', async () => {
    const load = async (name: string): Promise<never> => {
      throw new Error(`Cannot find package '${name}'`);
    };
    await expect(openStore('memory://', { load })).rejects.toThrow(
      /needs the package '@electric-sql\/pglite'.*npm install @electric-sql\/pglite/,
    );
    await expect(openStore('postgres://127.0.0.1:1/x', { load })).rejects.toThrow(/needs the package 'pg'.*npm install pg/);
    // Installed but broken: said so, not "not installed".
    const broken = async (): Promise<never> => {
      throw new SyntaxError('Unexpected token');
    };
    await expect(openStore('memory://', { load: broken })).rejects.toThrow(
      /'@electric-sql\/pglite', which is installed but could not be loaded \(Unexpected token\)/,
    );
  });

  it('rejects an unknown URL scheme and a bad schema name', async () => {
    await expect(openStore('mysql://x')).rejects.toThrow(/does not know the URL scheme/);
    await expect(openStore('memory://', { schema: 'Robert"; DROP' })).rejects.toThrow(/schema/);
  });
});

describe.skipIf(POSTGRES_URL === undefined)('openStore on a Postgres that is not accepting connections yet', () => {
  const schema = scratchSchema('open');
  afterAll(() => dropSchema(schema));

  it('waits for it (a worker started while Postgres restarts) and opens once it accepts them', async () => {
    // A port that refuses connections at first, then forwards to the real Postgres (as a server coming back up).
    const target = new URL(POSTGRES_URL as string);
    const free = createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const port = (free.address() as AddressInfo).port;
    await new Promise<void>((resolve) => free.close(() => resolve()));
    const proxy = createServer((client) => {
      const upstream = connect(Number(target.port || 5432), target.hostname);
      client.pipe(upstream).pipe(client);
      const end = (): void => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', end);
      upstream.on('error', end);
    });
    const url = new URL(POSTGRES_URL as string);
    url.port = String(port);
    const opening = openStore(url.toString(), { schema });
    const refusedFor = 600;
    await new Promise((resolve) => setTimeout(resolve, refusedFor));
    await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
    try {
      const store = await opening;
      const id = await store.submit({ agent: 'a', input: 'x' });
      expect((await store.get(id))?.status).toBe('ready');
      await store.close();
    } finally {
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });

  it('gives up after retryMs (default OPEN_RETRY_MS) with the connection error when nothing ever listens; 0 tries once', async () => {
    expect(OPEN_RETRY_MS).toBe(10_000);
    const url = new URL(POSTGRES_URL as string);
    const free = createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    url.port = String((free.address() as AddressInfo).port);
    await new Promise<void>((resolve) => free.close(() => resolve()));
    let started = Date.now();
    await expect(openStore(url.toString(), { schema, retryMs: 500 })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    started = Date.now();
    await expect(openStore(url.toString(), { schema, retryMs: 0 })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(Date.now() - started).toBeLessThan(500);
    await expect(openStore(url.toString(), { schema, retryMs: -1 })).rejects.toThrow(
      /`retryMs` must be a number of milliseconds >= 0, got -1/,
    );
  });
});
