// Crash tests: a process driving a turn is killed with SIGKILL at each named crash point
// (TURNKIT_STORE_CRASH_AT, see src/crash.ts), then another process recovers the turn. Every time:
// each call's side effect ran at most once, every acknowledged decision is applied, every call in
// the transcript has exactly one result, and the turn ends terminal. On PGlite (a data directory,
// processes one after another) and on Postgres when TURNKIT_TEST_POSTGRES_URL is set.

import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { testLog } from '../../../test-log.js';
import type { Store } from '@turnkit/store';
import { CRASH_ENV } from '../src/crash.js';
import { createStore, openSql, type Sql } from '../src/internal.js';
import { dropSchema, POSTGRES_URL, scratchSchema, WHY_SKIPPED } from './postgres.js';
import { FIXTURE_NODE_OPTIONS, nodeScript } from './node-script.js';

const DRIVE = fileURLToPath(new URL('./fixtures/crash-drive.ts', import.meta.url));
const REPO = fileURLToPath(new URL('../../../', import.meta.url));

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs drive.ts once; `crashAt` arms the crash point. */
function drive(url: string, schema: string, turnId: string, crashAt?: string, agents = false): Promise<Exit> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (crashAt === undefined) delete env[CRASH_ENV];
  else env[CRASH_ENV] = crashAt;
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...FIXTURE_NODE_OPTIONS, nodeScript(DRIVE), url, schema, turnId, ...(agents ? ['agents'] : [])],
      {
        cwd: REPO,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 110_000,
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => void (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** The crash points, each with the occurrence that matters in this turn (add runs, pay waits for approval, then runs). */
const CASES: readonly { readonly at: string; readonly what: string }[] = [
  { at: 'claimed', what: 'after the first claim, before any write' },
  { at: 'dispatching_persisted', what: 'after persisting `dispatching`, before a tool starts' },
  { at: 'tool_running', what: 'while `add` runs (its side effect done, no result yet)' },
  { at: 'tool_result_written', what: "after `add`'s result is written, before the state that includes it" },
  { at: 'before_commit', what: 'before the first state commit (the model reply is not written yet)' },
  { at: 'before_commit:2', what: "before the commit that parks the turn (with `add`'s result)" },
  { at: 'decision_written', what: 'after the approval is written, before decide returns' },
  { at: 'claimed:2', what: 'after the claim that applies the approval' },
  { at: 'tool_running:2', what: 'while the approved `pay` runs' },
  { at: 'tool_result_written:2', what: "after `pay`'s result is written" },
  { at: 'before_commit:4', what: 'before the commit that applies the approval' },
];

async function invariants(store: Store, turnId: string, acknowledged: readonly string[]): Promise<Record<string, unknown>> {
  const turn = await store.get(turnId);
  expect(turn).not.toBeNull();
  if (turn === null) return {};
  // The turn ends terminal.
  expect(['stopped', 'failed', 'cancelled']).toContain(turn.status);
  // Every call in the transcript has exactly one result.
  const calls = turn.transcript.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : []));
  const results = turn.transcript.flatMap((m) => (m.role === 'tool' ? [m.result.callId] : []));
  expect(calls.length).toBeGreaterThan(0);
  expect([...results].sort()).toEqual([...calls].sort());
  // Every acknowledged decision is applied (and every decision written, acknowledged or not).
  for (const callId of acknowledged) {
    expect(turn.decisions.find((d) => d.kind === 'decision' && d.callId === callId)?.status).toBe('applied');
  }
  expect(turn.decisions.filter((d) => d.status !== 'applied')).toEqual([]);
  return {
    status: turn.status,
    results: turn.transcript.flatMap((m) =>
      m.role === 'tool' ? [`${m.result.callId}:${JSON.stringify(m.result.output).slice(0, 24)}`] : [],
    ),
  };
}

/** Opens the store and a plain connection to the same database (for the side-effects table). */
async function open(url: string, schema: string): Promise<{ store: Store; sql: Sql }> {
  const sql = await openSql(url, schema === '-' ? {} : { schema });
  return { store: createStore(sql), sql };
}

/** Times each call's side effect ran. */
async function sideEffects(sql: Sql, turnId: string): Promise<Record<string, number>> {
  const rows = await sql.query('SELECT call_id, count(*)::int AS n FROM crash_side_effects WHERE turn_id = $1 GROUP BY call_id', [
    turnId,
  ]);
  return Object.fromEntries(rows.map((r) => [String(r.call_id), Number(r.n)]));
}

/**
 * The same turn with its calls in a child turn (a supervisor gives the task to an agent with `add`
 * and `pay`): the crash points whose recovery differs from a turn of one agent's, where the journal
 * and the inbox key a child's calls by their path. Every other boundary of a tree is covered in
 * process by agents.test.ts (the turn handed to a fresh worker after every effect). Postgres only:
 * 6 processes.
 */
const TREE_CASES: readonly { readonly at: string; readonly what: string }[] = [
  { at: 'tool_running', what: "while the child's `add` runs (no result yet)" },
  { at: 'before_commit:2', what: "before the commit that parks the child's `pay`" },
  { at: 'tool_running:2', what: "while the child's approved `pay` runs" },
];

/** The turn each case drives (the only one in its database). */
const TURN_ID = 'crash_turn';

/** Submits the turn every case drives. */
async function submitTurn(url: string, schema: string): Promise<void> {
  const before = await open(url, schema);
  await before.store.submit({ agent: 'crash', input: 'add, then pay', id: TURN_ID });
  await before.store.close();
}

/**
 * One test per crash point; `target` gives each its database (a PGlite directory, or a Postgres
 * schema) and says whether the turn is in it already. With `concurrent`, the cases run at once
 * (each in its own database): on Postgres most of a case's time is its processes waiting, for a
 * lease to expire or a tool to end; a PGlite process spends its time on the CPU, opening PGlite.
 * The suites themselves run at once (the PGlite cases one after another meanwhile): the file took
 * 66 s alone with the suites one after another, the PGlite one 38 s of it.
 */
function crashSuite(
  name: string,
  skip: string | false,
  target: (at: string) => Promise<{ url: string; schema: string; submitted: boolean }>,
  { cases = CASES, agents = false, concurrent = true } = {},
): void {
  const test = concurrent ? it : it.sequential;
  describe.skipIf(Boolean(skip)).concurrent(`crash points: ${name}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    for (const { at, what } of cases) {
      test(`SIGKILL at ${at} (${what}): another process recovers the turn`, async () => {
        const { url, schema, submitted } = await target(at);
        const turnId = TURN_ID;
        if (!submitted) await submitTurn(url, schema);

        const crashed = await drive(url, schema, turnId, at, agents);
        expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
        expect(crashed.stderr).toContain(`crash point ${at.split(':')[0]} reached`);
        const recovered = await drive(url, schema, turnId, undefined, agents);
        expect(recovered.code, recovered.stderr).toBe(0);

        const acknowledged = `${crashed.stdout}${recovered.stdout}`.match(/^acknowledged \S+$/gm)?.map((l) => l.slice(13)) ?? [];
        const { store, sql } = await open(url, schema);
        try {
          const seen = await invariants(store, turnId, acknowledged);
          // Each call's side effect ran at most once.
          const effects = await sideEffects(sql, turnId);
          for (const [callId, times] of Object.entries(effects))
            expect(times, `side effects of ${callId}`).toBeLessThanOrEqual(1);
          if (agents) {
            // The child's calls each have one result in its transcript, and the parent got the child's answer.
            const turn = await store.get(turnId);
            const child = turn?.children?.[0]?.transcript ?? [];
            const calls = child.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : []));
            const results = child.flatMap((m) => (m.role === 'tool' ? [m.result.callId] : []));
            expect([...results].sort()).toEqual([...calls].sort());
            expect(calls).toEqual(['c1', 'c2']);
            expect(turn?.status).toBe('stopped');
          }
          testLog(`crash at ${at} (${name}):`, JSON.stringify({ ...seen, sideEffects: effects, acknowledged }));
        } finally {
          await store.close();
        }
      }, 120_000);
    }
  });
}

const dir = mkdtempSync(join(tmpdir(), 'turnkit-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// Each case gets a copy of one closed store directory holding the submitted turn (opening a PGlite
// database costs far more than copying one).
const template = join(dir, 'template');
let templateMade: Promise<void> | undefined;
crashSuite(
  'PGlite (a data directory, one process at a time)',
  false,
  async (at) => {
    templateMade ??= submitTurn(template, '-');
    await templateMade;
    const url = join(dir, at.replace(':', '_'));
    cpSync(template, url, { recursive: true });
    return { url, schema: '-', submitted: true };
  },
  { concurrent: false },
);

// A schema per case: a worker claims any runnable turn, and each case's turn must be its own.
const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas) await dropSchema(schema);
});
crashSuite('Postgres', POSTGRES_URL === undefined ? WHY_SKIPPED : false, async (at) => {
  const schema = scratchSchema(`crash_${at.replace(':', '_')}`);
  schemas.push(schema);
  return { url: POSTGRES_URL ?? '', schema, submitted: false };
});

crashSuite(
  'a child turn, Postgres',
  POSTGRES_URL === undefined ? WHY_SKIPPED : false,
  async (at) => {
    const schema = scratchSchema(`crash_tree_${at.replace(':', '_')}`);
    schemas.push(schema);
    return { url: POSTGRES_URL ?? '', schema, submitted: false };
  },
  { cases: TREE_CASES, agents: true },
);
