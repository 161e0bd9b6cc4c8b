// `turnkit dev` as a person uses it: a real `turnkit dev` child process holds a PGlite store; from
// other processes, `turnkit run --store` parks a turn, `watch` follows it, `approve` and `reject`
// decide it, and the worker of `turnkit dev` finishes it. Then its file in the store directory:
// mode 0600, removed on exit, and a stale one (its process gone) ignored with a line saying so.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, example, startDev as startDevWith, turnkit } from './run-cli.js';

const startDev = (args: readonly string[], cwd: string) => startDevWith(BIN, args, cwd);

describe('turnkit dev', () => {
  it('holds the store; a turn run from a second process parks, is approved from a third, and finishes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnkit-dev-'));
    const store = join(dir, 'store');
    const dev = await startDev(['--agents', example('delete-files.ts'), '--store', store, '--port', '0'], dir);

    const file = join(store, 'turnkit-dev.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      url: dev.url,
      token: dev.token,
      pid: dev.pid,
      agents: ['delete-files'],
    });

    // A second turnkit dev on the same store is refused with the first one's address.
    const second = await turnkit(['dev', '--agents', example('delete-files.ts'), '--store', store, '--port', '0'], { cwd: dir });
    expect([second.code, second.stderr]).toEqual([
      2,
      `turnkit: turnkit dev (process ${dev.pid}) already holds the store ${store}, at ${dev.url}/console; stop it first or pass another --store.\n`,
    ]);

    const run = await turnkit(['run', example('delete-files.ts'), '--store', store], { cwd: dir });
    expect([run.code, run.stderr]).toEqual([3, '']);
    const id = /^stored turn (turn_\S+) in /m.exec(run.stdout)?.[1] ?? 'no turn id printed';
    expect(run.stdout).toContain(`stored turn ${id} in ${store} (run by turnkit dev, process ${dev.pid})`);
    expect(run.stdout).toContain(`turn ${id} · agent delete-files · awaiting_approval`);
    expect(run.stdout).toContain(`Decide each one; turnkit dev (process ${dev.pid}) continues the turn:`);
    expect(run.stdout).not.toContain('turnkit worker');

    const ls = await turnkit(['ls', '--store', store], { cwd: dir });
    expect([ls.code, ls.stdout.split('  ').slice(0, 3)]).toEqual([0, [id, 'delete-files', 'awaiting_approval']]);

    // The API of the same process answers with the token of the file.
    const api = await fetch(`${dev.url}/api/turns/${id}`, { headers: { authorization: `Bearer ${dev.token}` } });
    expect([api.status, ((await api.json()) as { status: string }).status]).toEqual([200, 'awaiting_approval']);

    const watching = turnkit(['watch', id, '--store', store], { cwd: dir });
    const approved = await turnkit(['approve', id, 'call_2', '--store', store], { cwd: dir });
    expect([approved.code, approved.stdout]).toEqual([
      0,
      `Approved call_2 of turn ${id} (stored).\nStill waiting for a decision: call_3.\n`,
    ]);
    const rejected = await turnkit(['reject', id, 'call_3', '--reason', 'keep it', '--store', store], { cwd: dir });
    expect([rejected.code, rejected.stdout]).toEqual([
      0,
      `Rejected call_3 of turn ${id} (stored).\nturnkit dev (process ${dev.pid}) continues the turn.\n`,
    ]);

    const watched = await watching;
    expect(watched.code, watched.stderr).toBe(0);
    const lines = watched.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('user: Free some space in tmp/: delete the build log and the cache, keep my notes.');
    expect(lines).toContain('status: awaiting_approval');
    expect(lines).toContain('tool call_2 delete_file: ok {"deleted":"tmp/build.log"}');
    expect(lines.slice(-2)).toEqual(['status: stopped', `→ turn ${id} is stopped`]);

    const show = await turnkit(['show', id, '--store', store], { cwd: dir });
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(
      'decision: call_2 approve · applied\ndecision: call_3 reject · applied\n→ stopped: completed\n',
    );

    const stopped = await dev.stop();
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(existsSync(file)).toBe(false);
    // With turnkit dev gone, the commands open the store themselves.
    const after = await turnkit(['ls', '--store', store], { cwd: dir });
    expect([after.code, after.stderr, after.stdout.split('  ').slice(0, 3)]).toEqual([0, '', [id, 'delete-files', 'stopped']]);
  }, 180_000);

  it('a file left by a turnkit dev that is no longer running is ignored, with a line saying so', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnkit-dev-'));
    const store = join(dir, 'store');
    const run = await turnkit(['run', example('delete-files.ts'), '--store', store], { cwd: dir });
    expect(run.code).toBe(3);
    // The pid of a process that has exited: what a killed turnkit dev leaves behind.
    const gone = spawnSync(process.execPath, ['-p', 'process.pid']).stdout.toString().trim();
    const file = join(store, 'turnkit-dev.json');
    await writeFile(file, JSON.stringify({ url: 'http://127.0.0.1:9', token: 'x'.repeat(43), pid: Number(gone), agents: [] }));
    const ls = await turnkit(['ls', '--store', store], { cwd: dir });
    expect(ls.code).toBe(0);
    expect(ls.stderr).toBe(
      `turnkit: ignoring ${file}: the turnkit dev that wrote it (process ${gone}) is no longer running; the store is opened directly.\n`,
    );
    expect(ls.stdout).toContain('delete-files  awaiting_approval');

    // A turnkit dev started on the store takes its place; an agent it does not run is refused by name.
    const dev = await startDev(['--agents', example('trip-planner.ts'), '--store', store, '--port', '0'], dir);
    const other = await turnkit(['run', example('delete-files.ts'), '--store', store], { cwd: dir });
    expect([other.code, other.stderr]).toEqual([
      2,
      `turnkit: turnkit dev (process ${dev.pid}) holds the store ${store} and runs the agents trip-planner, not 'delete-files': start it with --agents ${example('delete-files.ts')}.\n`,
    ]);
    expect((await dev.stop()).code).toBe(0);
    expect(existsSync(file)).toBe(false);
  }, 180_000);
});
