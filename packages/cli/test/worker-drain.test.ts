// `turnkit worker` on SIGTERM: it stops claiming, waits --drain-ms for the turns it holds, then
// hands back what still runs (the turn is not cancelled: its lease ends and it stays runnable),
// says each step on stderr, and exits 0. Run with the built binary on a PGlite directory.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openSql, createStore } from '@turnkit/store/internal';
import { builtFixture, turnkitChild } from './run-cli.js';

// The fixture's plain-Node build: the test is about draining, not about loading TypeScript.
const AGENTS = builtFixture(fileURLToPath(new URL('./fixtures/hang-agents.mts', import.meta.url)));

describe('turnkit worker drains on SIGTERM', () => {
  it('reports what it does, hands back a turn whose tool hangs after --drain-ms, and exits 0', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnkit-drain-'));
    const path = join(dir, 'store');
    const setup = createStore(await openSql(path));
    const id = await setup.submit({ agent: 'hang', input: 'Hang.' });
    await setup.close();

    const worker = await turnkitChild(['worker', '--agents', AGENTS, '--store', path, '--drain-ms', '200'], {
      cwd: dir,
      ready: 'hang started',
    });
    const code = await worker.stop();
    const stderr = worker.stderr();
    expect(code, stderr).toBe(0);
    const lines = stderr.trimEnd().split('\n');
    expect(lines).toContain(`turnkit worker: claimed ${id} (agent hang, token 1) · held 1, claimed 1, finished 0`);
    expect(lines).toContain('turnkit worker: SIGTERM: finishing the turns it holds; what still runs in 200 ms is handed back…');
    expect(lines).toContain('turnkit worker: draining: 1 turn(s) held, handed back after 200 ms');
    expect(lines).toContain(`turnkit worker: ${id} handed back · held 0, claimed 1, finished 0`);
    expect(lines.at(-1)).toBe(
      'turnkit worker: stopped · held 0, claimed 1, finished 0, parked 0, lost 0, handed back 1, claims 1',
    );

    // Handed back, not cancelled: the turn waits for the next worker, its lease already free.
    const sql = await openSql(path);
    const [row] = await sql.query('SELECT status, runnable, lease_owner FROM turnkit_turns WHERE id = $1', [id]);
    expect(row).toEqual({ status: 'dispatching', runnable: true, lease_owner: null });
    await sql.close();
  }, 120_000);
});
