// The commands on stored turns, run with the built binary: `turnkit run --store`, `ls`, `show`,
// `approve`, `reject`, `cancel` and `worker`, on PGlite (a directory) and, when
// TURNKIT_TEST_POSTGRES_URL is set, on a Postgres database made for the test.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '@turnkit/store';
import { afterAll, describe, expect, it } from 'vitest';
import { builtFixture, example, turnkit, turnkitChild } from './run-cli.js';

// The fixtures' plain-Node builds: these tests are about stored turns, not about loading TypeScript
// (the `--store` test below runs a .ts example, with tsx).
const fixture = (name: string): string => builtFixture(fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url)));
const CHARGE = fixture('charge.mts');
const AGENTS = fixture('agents.mts');
const CAPPED = fixture('capped-agents.mts');
const tempDir = (): Promise<string> => mkdtemp(join(tmpdir(), 'turnkit-store-cli-'));
const charges = async (dir: string): Promise<string[]> =>
  existsSync(join(dir, 'side-effects.log')) ? (await readFile(join(dir, 'side-effects.log'), 'utf8')).trimEnd().split('\n') : [];
const turnIdOf = (stdout: string): string => /^stored turn (turn_\S+) in /m.exec(stdout)?.[1] ?? 'no turn id printed';

const POSTGRES_URL = process.env.TURNKIT_TEST_POSTGRES_URL || undefined;

/** The approval flow on one store: run parks, approve/reject, a worker continues, show reads it back. */
async function approvalFlow(store: string, cwd: string): Promise<void> {
  const run = await turnkit(['run', CHARGE, '--store', store], { cwd });
  // A PGlite directory is created by `run --store`, which says so (a mistyped one is seen at once).
  expect(run.stderr).toBe(store.startsWith('postgres') ? '' : `turnkit: creating a new store in ${store}\n`);
  expect(run.code).toBe(3);
  const id = turnIdOf(run.stdout);
  expect(run.stdout).toContain(`turn ${id} · agent charge · awaiting_approval`);
  expect(run.stdout).toContain('Waiting for a decision on:\n  call_1 charge {"cents":5}');
  expect(run.stdout).toContain(`turnkit approve ${id} call_1 --store ${store}`);
  expect(run.stdout).toContain(`turnkit worker --agents ${CHARGE} --until-idle --store ${store}`);

  const ls = await turnkit(['ls', '--store', store, '--status', 'awaiting_approval'], { cwd });
  expect([ls.code, ls.stdout.split('\n')[0]?.split('  ').slice(0, 3)]).toEqual([0, [id, 'charge', 'awaiting_approval']]);

  const approved = await turnkit(['approve', id, 'call_1', '--store', store], { cwd });
  expect([approved.code, approved.stdout.split('\n')[0]]).toEqual([0, `Approved call_1 of turn ${id} (stored).`]);
  // First decision wins: a second one is refused, exit 1; nothing ran yet (no worker).
  const again = await turnkit(['reject', id, 'call_1', '--store', store], { cwd });
  expect([again.code, again.stderr]).toEqual([
    1,
    `turnkit: call 'call_1' of turn '${id}' has a decision already, and the first decision per call stands; nothing of this request was stored, so send any other decisions again without it.\n`,
  ]);
  expect(await charges(cwd)).toEqual([]);

  // The worker (the scenario file as the agents file) charges, parks on call_2.
  const first = await turnkit(['worker', '--agents', CHARGE, '--until-idle', '--store', store], { cwd });
  expect(first.code, first.stderr).toBe(0);
  expect(await charges(cwd)).toEqual(['call_1 charged 5']);
  const rejected = await turnkit(['reject', id, 'call_2', '--reason', 'too much', '--store', store], { cwd });
  expect(rejected.code).toBe(0);
  // Another agents file (exporting `agents`) finishes it.
  const second = await turnkit(['worker', '--agents', AGENTS, '--until-idle', '--store', store], { cwd });
  expect(second.code, second.stderr).toBe(0);
  expect(await charges(cwd)).toEqual(['call_1 charged 5']);

  const show = await turnkit(['show', id, '--store', store], { cwd });
  expect(show.code).toBe(0);
  expect(show.stdout.split('\n')).toEqual([
    `turn ${id} · agent charge · stopped`,
    'user: Charge 5 cents, then 7.',
    'assistant: [call_1 charge]',
    'tool call_1 charge: ok {"charged":5}',
    'assistant: [call_2 charge]',
    'tool call_2 charge: error rejected: too much. A person declined this call; do not retry it unchanged.',
    'assistant: Charged twice.',
    'decision: call_1 approve · applied',
    'decision: call_2 reject · applied',
    '→ stopped: completed',
    '',
  ]);
  const json = await turnkit(['show', id, '--store', store, '--json'], { cwd });
  expect(JSON.parse(json.stdout)).toMatchObject({ id, agent: 'charge', status: 'stopped', toolCalls: [{ callId: 'call_1' }] });
  const cancel = await turnkit(['cancel', id, '--store', store], { cwd });
  expect([cancel.code, cancel.stderr]).toEqual([1, `Turn ${id} has already ended (stopped); nothing to cancel.\n`]);
}

// The tests of each describe below use stores of their own, and both describes run at once: each
// test is a chain of CLI processes, one after another, so one at a time leaves the cores idle while
// a process starts (the file alone: 57 s one test after another, 43 s of CPU). The Postgres tests
// share a database, so they run one after the other.
describe.concurrent('turnkit run --store and the commands on stored turns', () => {
  it('PGlite: run parks the turn; approve, reject and worker continue it; show reads it back', async () => {
    const dir = await tempDir();
    await approvalFlow(join(dir, 'store'), dir);
  }, 120_000);

  it('--store alone keeps the turns in ./.turnkit; cancel ends a parked turn', async () => {
    const dir = await tempDir();
    const run = await turnkit(['run', example('delete-files.ts'), '--store'], { cwd: dir });
    expect(run.code).toBe(3);
    expect(existsSync(join(dir, '.turnkit'))).toBe(true);
    const id = turnIdOf(run.stdout);
    expect(run.stdout).toContain(`turnkit approve ${id} call_2\n`);
    const cancel = await turnkit(['cancel', id, '--reason', 'not today'], { cwd: dir });
    expect(cancel.code).toBe(0);
    const worker = await turnkit(['worker', '--agents', example('delete-files.ts'), '--until-idle'], { cwd: dir });
    expect(worker.code, worker.stderr).toBe(0);
    const show = await turnkit(['show', id], { cwd: dir });
    expect(show.code).toBe(1);
    expect(show.stdout).toContain('decision: cancel (not today) · applied\n→ cancelled: not today\n');
  }, 120_000);

  it('a PGlite store in use by a worker is refused with the way out; SIGTERM stops the worker', async () => {
    const dir = await tempDir();
    const store = join(dir, 'store');
    const worker = await turnkitChild(['worker', '--agents', AGENTS, '--store', store], { cwd: dir, ready: 'Ctrl+C stops it' });
    const ls = await turnkit(['ls', '--store', store], { cwd: dir });
    expect(ls.code).toBe(2);
    expect(ls.stderr).toMatch(
      new RegExp(
        `^turnkit: Could not open the store .* in use by process ${worker.pid}.*use Postgres for several processes.*\\n$`,
      ),
    );
    expect(ls.stderr.split('\n')).toHaveLength(2);
    const code = await worker.stop();
    expect(code).toBe(0);
    expect((await turnkit(['ls', '--store', store], { cwd: dir })).code).toBe(0);
  }, 120_000);

  it('show prints the input that runs when a before-hook rewrote the model’s', async () => {
    const dir = await tempDir();
    const store = join(dir, 'store');
    const opened = await openStore(store);
    const id = await opened.submit({ agent: 'charge', input: 'Charge 5 cents.' });
    await opened.close();
    const worker = await turnkit(['worker', '--agents', CAPPED, '--until-idle', '--store', store], { cwd: dir });
    expect(worker.code, worker.stderr).toBe(0);
    const show = await turnkit(['show', id, '--store', store], { cwd: dir });
    expect(show.stdout).toContain('assistant: [call_1 charge]');
    expect(await charges(dir)).toEqual([]);
    expect(show.stdout).toContain('Waiting for a decision on:\n  call_1 charge {"cents":3}\n');
  }, 120_000);

  it('run --store --thread queues a second turn behind a parked one; show --thread reads the thread', async () => {
    const dir = await tempDir();
    const store = join(dir, 'store');
    const first = await turnkit(['run', CHARGE, '--store', store, '--thread', 'billing'], { cwd: dir });
    expect(first.code, first.stderr).toBe(3);
    const firstId = turnIdOf(first.stdout);
    expect(first.stdout).toContain(`stored turn ${firstId} in ${store} (thread billing)`);
    const second = await turnkit(['run', CHARGE, '--store', store, '--thread', 'billing'], { cwd: dir });
    expect(second.code, second.stderr).toBe(0);
    const secondId = turnIdOf(second.stdout);
    expect(second.stdout).toContain(`turn ${secondId} · agent charge · ready`);
    expect(second.stdout).toContain(`It waits behind turn ${firstId} of thread billing:`);
    const show = await turnkit(['show', '--thread', 'billing', '--store', store], { cwd: dir });
    expect(show.code, show.stderr).toBe(3);
    expect(show.stdout.split('\n').slice(0, 5)).toEqual([
      'thread billing · agent charge · open',
      `  turn ${firstId} · awaiting_approval`,
      `  turn ${secondId} · ready`,
      'user: Charge 5 cents, then 7.',
      'assistant: [call_1 charge]',
    ]);
    expect(show.stdout).toContain(`turn ${firstId} is\nWaiting for a decision on:\n  call_1 charge {"cents":5}`);
    const json = await turnkit(['show', '--thread', 'billing', '--store', store, '--json'], { cwd: dir });
    expect((JSON.parse(json.stdout) as { turns: unknown[]; current: string }).current).toBe(firstId);
    const nope = await turnkit(['show', '--thread', 'nope', '--store', store], { cwd: dir });
    expect([nope.code, nope.stderr]).toEqual([2, expect.stringMatching(/^turnkit: There is no thread 'nope' in the store /)]);
    const both = await turnkit(['show', firstId, '--thread', 'billing', '--store', store], { cwd: dir });
    expect([both.code, both.stderr]).toEqual([
      2,
      'turnkit: Give a turn id or --thread <id> (one of them): `turnkit ls` lists the turns.\n',
    ]);
    const loose = await turnkit(['run', CHARGE, '--thread', 'billing'], { cwd: dir });
    expect([loose.code, loose.stderr]).toEqual([2, 'turnkit: --thread names a thread of stored turns: use it with --store.\n']);
  }, 120_000);

  it('usage errors are one line and exit 2', async () => {
    const dir = await tempDir();
    const store = join(dir, 'store');
    // An unknown call of a real turn names the parked ones.
    const run = await turnkit(['run', CHARGE, '--store', store], { cwd: dir });
    const bad = await turnkit(['approve', turnIdOf(run.stdout), 'call_9', '--store', store], { cwd: dir });
    expect([bad.code, bad.stderr]).toEqual([
      2,
      `turnkit: turn '${turnIdOf(run.stdout)}' has no parked call 'call_9'; its calls waiting for a decision are 'call_1'. Nothing of this request was stored; send decisions for waiting calls only.\n`,
    ]);
    await writeFile(join(dir, 'a-file'), 'not a store\n');
    await mkdir(join(dir, 'empty'));
    const cases: [string[], RegExp][] = [
      // A file, a mistyped directory and a directory that holds no store: refused, nothing is created.
      [
        ['ls', '--store', join(dir, 'a-file')],
        /^turnkit: Could not open the store .*a-file: The PGlite store path .*a-file is a file, not a directory/,
      ],
      [['ls', '--store', join(dir, 'stor')], /^turnkit: There is no store in .*stor \(no such directory\); check --store\./],
      [['show', 'turn_1', '--store', join(dir, 'stor')], /^turnkit: There is no store in .*stor \(no such directory\)/],
      [['approve', 'turn_1', 'call_1', '--store', join(dir, 'stor')], /^turnkit: There is no store in .*stor/],
      [['ls', '--store', join(dir, 'empty')], /^turnkit: .*empty is a directory but not a turnkit store/],
      [['run', CHARGE, '--store', store, '--json'], /^turnkit: --json cannot be used with --store/],
      [
        ['show', 'turn_nope', '--store', store],
        /^turnkit: There is no turn 'turn_nope' in the store .*`turnkit ls` lists its turns\.$/,
      ],
      [['approve', 'turn_nope', 'call_1', '--store', store], /^turnkit: There is no turn 'turn_nope'/],
      [['cancel', 'turn_nope', '--store', store], /^turnkit: There is no turn 'turn_nope'/],
      [['ls', '--limit', '0', '--store', store], /^turnkit: option '--limit <n>' argument '0' is invalid/],
      [['ls', '--status', 'done', '--store', store], /^turnkit: option '--status <status>' argument 'done' is invalid/],
      [['worker', '--store', store], /^turnkit: required option '--agents <file>' not specified$/],
      [
        ['worker', '--agents', join(dir, 'missing.ts'), '--store', store],
        /^turnkit: The agents file .*missing\.ts does not exist/,
      ],
      [['ls', '--store', 'mysql://x'], /^turnkit: Could not open the store mysql:\/\/x: openStore does not know the URL scheme/],
      [['approve', 'turn_nope', '--store', store], /^turnkit: missing required argument 'call'$/],
    ];
    const check = async ([args, message]: [string[], RegExp]): Promise<void> => {
      const run = await turnkit(args, { cwd: dir });
      expect([run.code, run.stdout], args.join(' ')).toEqual([2, '']);
      expect(run.stderr.trimEnd(), args.join(' ')).toMatch(message);
      expect(run.stderr.trimEnd().split('\n'), args.join(' ')).toHaveLength(1);
    };
    // The commands on the one PGlite store run one after another (a second process would find it
    // in use); the others at the same time.
    const onStore = cases.filter(([args]) => args.includes(store));
    await Promise.all([
      ...cases.filter((entry) => !onStore.includes(entry)).map(check),
      (async () => {
        for (const entry of onStore) await check(entry);
      })(),
    ]);
    expect(existsSync(join(dir, 'stor'))).toBe(false);
    expect(await readdir(join(dir, 'empty'))).toEqual([]);
  }, 120_000);
});

describe
  .skipIf(POSTGRES_URL === undefined)
  .concurrent(
    `turnkit run --store postgres://… ${POSTGRES_URL === undefined ? '(skipped: TURNKIT_TEST_POSTGRES_URL is not set; .ci/run starts a Postgres and sets it)' : ''}`,
    () => {
      const database = `turnkit_cli_${process.pid}`;
      const admin = async (sql: string): Promise<void> => {
        const { Client } = (await import('pg')).default;
        const client = new Client({ connectionString: POSTGRES_URL });
        await client.connect();
        try {
          await client.query(sql);
        } finally {
          await client.end();
        }
      };
      afterAll(() => admin(`DROP DATABASE IF EXISTS ${database}`));

      it.sequential('the same flow on Postgres', async () => {
        await admin(`CREATE DATABASE ${database}`);
        const url = new URL(POSTGRES_URL ?? '');
        url.pathname = `/${database}`;
        await approvalFlow(url.href, await tempDir());
      }, 120_000);

      it.sequential('run --store --id waits while another worker runs the turn, and exits 3 when it parks', async () => {
        const url = new URL(POSTGRES_URL ?? '');
        url.pathname = `/${database}`;
        const dir = await tempDir();
        // A worker with the same agent races the run's own worker for each turn; whichever claims it,
        // run waits until the turn parks and prints it (before, a turn the other worker took ended
        // the run at once: exit 0, status dispatching).
        const worker = await turnkitChild(['worker', '--agents', AGENTS, '--store', url.href], {
          cwd: dir,
          ready: 'Ctrl+C stops it',
        });
        try {
          for (const id of ['raced-1', 'raced-2', 'raced-3']) {
            const run = await turnkit(['run', CHARGE, '--store', url.href, '--id', id], { cwd: dir });
            expect([run.code, run.stderr], id).toEqual([3, '']);
            expect(run.stdout).toContain(`turn ${id} · agent charge · awaiting_approval\n`);
          }
        } finally {
          expect(await worker.stop()).toBe(0);
        }
      }, 120_000);
    },
  );
