// Chaos on a real Postgres: four worker processes run two hundred turns with tool calls and
// approvals (decided by a separate process at random moments); every half second a random worker
// is killed with SIGKILL and started again (the next kill half a second after it runs); once, Postgres itself is restarted (a server of this
// file's own, so that the other test files running meanwhile keep their connections). At the end, the
// figures (printed with TURNKIT_TEST_VERBOSE=1) and the invariants:
// - every turn is terminal;
// - each call's side effect ran at most once, and a call without a result of its own is
//   `interrupted`, never silently lost;
// - every decision acknowledged to the deciding process was applied;
// - every call in every transcript has exactly one result;
// - no turn was written by two workers: in each turn's log the fencing token never goes down.

import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { testLog } from '../../../test-log.js';
import type { WorkerStats } from '@turnkit/store';
import { createStore, openSql, type Sql } from '../src/internal.js';
import { LOG_ROWS } from '../src/sql/values.js';
import { CHAOS_AGENT, CHAOS_TABLES } from './fixtures/chaos-agent.js';
import { type OwnPostgres, ownPostgres, POSTGRES_URL, scratchSchema, WHY_SKIPPED } from './postgres.js';
import { nodeScript } from './node-script.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const script = (name: string): string => fileURLToPath(new URL(`./fixtures/chaos-${name}.ts`, import.meta.url));

const TURNS = 200;
const WORKERS = 4;
const KILL_EVERY_MS = 500;
/**
 * Turns are submitted over this many kills (a kill every half second: about 15 s, so the chaos
 * lasts about 20 s in all), and Postgres is restarted at the RESTART_POSTGRES_AT_KILL-th kill.
 */
const SUBMIT_OVER_KILLS = 30;
const RESTART_POSTGRES_AT_KILL = 10;
/** The drill gives up (and fails) when no turn has ended for this long: something hangs. */
const GIVE_UP_MS = 60_000;

/** Children that exited by themselves (not by a signal the test sent), with their stderr. */
const died: string[] = [];
/** Set when the test ends the children itself (SIGTERM: they drain and exit with code 0). */
let ending = false;

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A child process running one of the chaos scripts; `lines` collects its stdout lines. */
function start(name: string, url: string, schema: string, lines: (line: string) => void): ChildProcess {
  const child = spawn(process.execPath, [nodeScript(script(name)), url, schema], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The last of its standard error, for the failure message of a process that died on its own.
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString('utf8')).slice(-4000);
  });
  child.once('exit', (code, signal) => {
    if (signal === null && !ending)
      died.push(`${name} (pid ${child.pid}) exited with code ${code}: ${errors.trim() || '(no stderr)'}`);
  });
  let rest = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const text = rest + chunk.toString('utf8');
    const parts = text.split('\n');
    rest = parts.pop() ?? '';
    for (const line of parts) lines(line);
  });
  return child;
}

const exited = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );

/** Runs a query until Postgres answers (it may be restarting). */
async function retrying<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      if (attempt > 100) throw error;
      await pause(200);
    }
  }
}

interface Figures {
  [name: string]: number;
}

async function invariants(sql: Sql, acks: ReadonlySet<string>): Promise<Figures> {
  const store = createStore(sql);
  const open = await sql.query(
    `SELECT count(*)::int AS n FROM turnkit_turns WHERE status NOT IN ('stopped', 'failed', 'cancelled')`,
  );
  const doubled = await sql.query(
    'SELECT turn_id, call_id, count(*)::int AS n FROM chaos_effects GROUP BY 1, 2 HAVING count(*) > 1',
  );
  const effects = new Set(
    (await sql.query('SELECT turn_id, call_id FROM chaos_effects')).map((r) => `${r.turn_id} ${r.call_id}`),
  );
  const tokens = await sql.query(
    `SELECT turn_seq FROM (SELECT turn_seq, lease_token, lag(lease_token) OVER (PARTITION BY turn_seq ORDER BY seq) AS before FROM ${LOG_ROWS} r) l
     WHERE lease_token < before`,
  );
  const { turns } = await store.list({ limit: 1000 });
  let calls = 0;
  let interrupted = 0;
  let rejected = 0;
  let unanswered = 0;
  let okWithoutEffect = 0;
  let applied = 0;
  for (const summary of turns) {
    const turn = await store.get(summary.id);
    if (turn === null) continue;
    const ids = turn.transcript.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : []));
    const results = turn.transcript.flatMap((m) => (m.role === 'tool' ? [m.result] : []));
    calls += ids.length;
    for (const id of ids) {
      const mine = results.filter((r) => r.callId === id);
      if (mine.length !== 1) unanswered += 1;
      const output = String(mine[0]?.output ?? '');
      if (output.startsWith('interrupted')) interrupted += 1;
      else if (output.startsWith('rejected')) rejected += 1;
      else if (mine[0]?.isError !== true && !effects.has(`${turn.id} ${id}`)) okWithoutEffect += 1;
    }
    for (const d of turn.decisions)
      if (d.kind === 'decision' && acks.has(`${turn.id} ${d.callId}`) && d.status === 'applied') applied += 1;
  }
  return {
    turns: turns.length,
    notTerminal: Number(open[0]?.n),
    calls,
    sideEffects: effects.size,
    sideEffectsRunTwice: doubled.length,
    interrupted,
    rejected,
    callsWithoutExactlyOneResult: unanswered,
    okResultsWithoutSideEffect: okWithoutEffect,
    acknowledgedDecisions: acks.size,
    acknowledgedApplied: applied,
    turnsWhoseTokenWentDown: tokens.length,
  };
}

describe.skipIf(POSTGRES_URL === undefined)(
  `chaos on Postgres${POSTGRES_URL === undefined ? ` (skipped: ${WHY_SKIPPED})` : ''}`,
  () => {
    const schema = scratchSchema('chaos');
    let postgres: OwnPostgres | undefined;
    afterAll(() => postgres?.stop());

    it('four workers killed every half second and a Postgres restart: terminal turns, effects at most once, decisions applied, one writer', async () => {
      postgres = await ownPostgres();
      const { url } = postgres;
      const sql = await openSql(url, { schema });
      for (const statement of CHAOS_TABLES) await sql.query(statement);
      const store = createStore(sql);
      const stats = new Map<number, WorkerStats>();
      const acks = new Set<string>();
      const workers: ChildProcess[] = [];
      /** Starts the worker of `slot`; resolves once it runs (or has exited). */
      const startWorker = (slot: number): Promise<void> =>
        new Promise((resolve) => {
          const child = start('worker', url, schema, (line) => {
            if (line === 'ready') resolve();
            else if (line.startsWith('{') && child.pid !== undefined) stats.set(child.pid, JSON.parse(line) as WorkerStats);
          });
          child.once('exit', () => resolve());
          workers[slot] = child;
        });
      await Promise.all(Array.from({ length: WORKERS }, (_, slot) => startWorker(slot)));
      const decider = start('decider', url, schema, (line) => {
        const [tag, turn, call] = line.split(' ');
        if (tag === 'ack') acks.add(`${turn} ${call}`);
      });

      const began = Date.now();
      let kills = 0;
      let restartedFor = -1;
      let submitted = 0;
      let ended = 0;
      let endedAt = began;
      for (;;) {
        while (submitted < TURNS && submitted < Math.ceil((TURNS * (kills + 1)) / SUBMIT_OVER_KILLS)) {
          await retrying(() => store.submit({ agent: CHAOS_AGENT, id: `chaos_${submitted}`, input: `turn ${submitted}` }));
          submitted += 1;
        }
        if (restartedFor < 0 && kills >= RESTART_POSTGRES_AT_KILL) restartedFor = await postgres.restart();
        const [row] = await retrying(() =>
          sql.query(`SELECT count(*)::int AS n FROM turnkit_turns WHERE status NOT IN ('stopped', 'failed', 'cancelled')`),
        );
        if (submitted === TURNS && Number(row?.n) === 0) break;
        if (submitted - Number(row?.n) > ended) [ended, endedAt] = [submitted - Number(row?.n), Date.now()];
        if (Date.now() - endedAt > GIVE_UP_MS) break;
        const slot = Math.floor(Math.random() * WORKERS);
        const victim = workers[slot] as ChildProcess;
        victim.kill('SIGKILL');
        await exited(victim);
        kills += 1;
        // The next kill comes half a second after the new worker runs: on a busy machine, a worker
        // killed before it has started would be no chaos at all.
        await startWorker(slot);
        await pause(KILL_EVERY_MS);
      }
      const seconds = (Date.now() - began) / 1000;
      ending = true;
      for (const child of [...workers, decider]) child.kill('SIGTERM');
      await Promise.all([...workers, decider].map(exited));

      const figures = await invariants(sql, acks);
      const claimed = [...stats.values()].reduce((sum, s) => sum + s.claimed, 0);
      const claims = [...stats.values()].reduce((sum, s) => sum + s.claims, 0);
      const [leases] = await sql.query('SELECT avg(lease_token)::float8 AS avg, max(lease_token)::int AS max FROM turnkit_turns');
      await store.close();
      testLog(
        [
          `chaos: ${seconds.toFixed(1)} s, ${WORKERS} workers, ${kills} SIGKILLs, Postgres restarted once (down ${restartedFor} ms)`,
          ...Object.entries(figures).map(([name, value]) => `  ${name}: ${value}`),
          `  claims of a turn (fencing token): mean ${Number(leases?.avg).toFixed(2)}, max ${leases?.max}`,
          `  claim statements per claimed turn (workers' last reported counts): ${(claims / Math.max(1, claimed)).toFixed(2)}`,
        ].join('\n'),
      );
      // A worker or the decider that exits by itself is a fault of the store's client code (the test only kills with signals).
      expect(died).toEqual([]);
      expect(figures).toMatchObject({
        turns: TURNS,
        notTerminal: 0,
        sideEffectsRunTwice: 0,
        callsWithoutExactlyOneResult: 0,
        okResultsWithoutSideEffect: 0,
        acknowledgedApplied: acks.size,
        turnsWhoseTokenWentDown: 0,
      });
      expect(figures.calls).toBeGreaterThanOrEqual(TURNS * 2);
      expect(kills).toBeGreaterThan(20);
      expect(restartedFor).toBeGreaterThan(0);
      expect(acks.size).toBeGreaterThan(0);
    }, 600_000);
  },
);
