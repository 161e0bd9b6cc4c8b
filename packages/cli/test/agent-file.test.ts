// One agent file for the library, `turnkit run` and `turnkit worker`: permission sets and hooks in a
// scenario apply in every one of them, and a scripted model continues a stored turn where its
// transcript is (or is refused with the reason `turnkit resume` gives).
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '@turnkit/store';
import { describe, expect, it } from 'vitest';
import { builtFixture, turnkit } from './run-cli.js';

// The fixtures' plain-Node builds: these tests are about what an agent file does, not about loading TypeScript.
const ALLOWED = builtFixture(fileURLToPath(new URL('./fixtures/allowed-charge.mts', import.meta.url)));
const SCRIPTED = builtFixture(fileURLToPath(new URL('./fixtures/scripted-agents.mts', import.meta.url)));
const tempDir = (): Promise<string> => mkdtemp(join(tmpdir(), 'turnkit-agent-file-'));
const charges = async (dir: string): Promise<string[]> =>
  existsSync(join(dir, 'side-effects.log')) ? (await readFile(join(dir, 'side-effects.log'), 'utf8')).trimEnd().split('\n') : [];

describe('one agent file', () => {
  it('a permission set and a before-hook of a scenario apply in turnkit run, run --store and the worker', async () => {
    const inline = await tempDir();
    const run = await turnkit(['run', ALLOWED], { cwd: inline });
    // `charge` needs approval by itself; the scenario's allow rule lets it run, its hook caps it at 6.
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(await charges(inline)).toEqual(['call_1 charged 5', 'call_2 charged 6']);

    const stored = await tempDir();
    const store = join(stored, 'store');
    const storedRun = await turnkit(['run', ALLOWED, '--store', store], { cwd: stored });
    expect(storedRun.code, storedRun.stdout + storedRun.stderr).toBe(0);
    expect(storedRun.stdout).toContain('tool call_2 charge: ok {"charged":6}\nassistant: Charged 5 cents, then 6.\n');
    expect(await charges(stored)).toEqual(['call_1 charged 5', 'call_2 charged 6']);
  }, 120_000);

  it('a JSON scenario takes permission sets too', async () => {
    const dir = await tempDir();
    const file = join(dir, 'refund.json');
    await writeFile(
      file,
      JSON.stringify({
        input: 'Refund order A-1.',
        permissions: { allow: ['refund'] },
        tools: [{ name: 'refund', needsApproval: true, result: 'refunded' }],
        model: [{ calls: [{ name: 'refund', input: { order: 'A-1' } }] }, { text: 'Refunded.' }],
      }),
    );
    const run = await turnkit(['run', file], { cwd: dir });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('✔ stopped: completed');
  }, 60_000);

  it('a worker continues a scripted model from the turn’s position: no round runs twice', async () => {
    const dir = await tempDir();
    const store = join(dir, 'store');
    const opened = await openStore(store);
    const id = await opened.submit({ agent: 'charge', input: 'Charge 5 cents, then 7.' });
    await opened.close();
    const worker = (): ReturnType<typeof turnkit> =>
      turnkit(['worker', '--agents', SCRIPTED, '--until-idle', '--store', store], { cwd: dir });

    expect((await worker()).code).toBe(0);
    expect((await turnkit(['approve', id, 'call_1', '--store', store], { cwd: dir })).code).toBe(0);
    // Each activation is a new process and a new model: the script goes on at step 2, then 3.
    expect((await worker()).code).toBe(0);
    expect((await turnkit(['approve', id, 'call_2', '--store', store], { cwd: dir })).code).toBe(0);
    expect((await worker()).code).toBe(0);
    const show = await turnkit(['show', id, '--store', store], { cwd: dir });
    expect(show.code).toBe(0);
    expect(show.stdout.split('\n').slice(1, 7)).toEqual([
      'user: Charge 5 cents, then 7.',
      'assistant: [call_1 charge]',
      'tool call_1 charge: ok {"charged":5}',
      'assistant: [call_2 charge]',
      'tool call_2 charge: ok {"charged":7}',
      'assistant: Charged twice.',
    ]);
    expect(await charges(dir)).toEqual(['call_1 charged 5', 'call_2 charged 7']);
  }, 180_000);

  it('a ready-made scripted model in an agents file is refused with the reason turnkit resume gives', async () => {
    const dir = await tempDir();
    const worker = await turnkit(['worker', '--agents', SCRIPTED, '--until-idle', '--store', join(dir, 'store')], {
      cwd: dir,
      env: { READY_MADE: '1' },
    });
    expect([worker.code, worker.stderr]).toEqual([
      2,
      `turnkit: ${SCRIPTED}: agent 'charge' has a ready-made scripted model, which cannot continue a stored turn (a worker resuming it would start its script again). Export a function of the calls already made instead: model: ({ startAt }) => scriptedModel(steps, { startAt }).\n`,
    ]);
  }, 60_000);
});
