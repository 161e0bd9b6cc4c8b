// The durable comparison: turnkit workers against LangChain `createAgent` with LangGraph's
// `PostgresSaver`, on one Postgres, the bench scenario, in one run. 1, 2 and 4 worker processes
// each (one turn at a time per process, for both); every run in a fresh schema. Measured: turns per
// second (from `go` to the last process done), statements per turn (counted at each system's `pg`
// client), write-ahead log and stored bytes per turn (in the database), and the time from a
// decision to the turn running its tool again.
import { type ChildProcess, spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { openStore } from '@turnkit/store';
import pg from 'pg';
import { databaseWal, walDump } from './durable-long.js';

export type DurableSystem = 'turnkit' | 'langgraph';
export const SYSTEM_NAMES: Record<DurableSystem, string> = {
  turnkit: 'turnkit workers (@turnkit/store)',
  langgraph: 'LangChain createAgent + LangGraph PostgresSaver',
};

export interface ThroughputFigure {
  readonly system: DurableSystem;
  readonly workers: number;
  readonly turns: number;
  readonly turnsPerSecond: number;
  readonly statementsPerTurn: number;
  readonly walBytesPerTurn: number;
  readonly storedBytesPerTurn: number;
  /** Times the database flushed its log to disk, per turn (pg_stat_wal; the whole cluster's). */
  readonly flushesPerTurn: number;
  /** CPU time per turn (ms) of the worker processes, and of everything else on the machine (Postgres, mostly). */
  readonly workerCpuMsPerTurn: number;
  readonly otherCpuMsPerTurn: number;
  /** How busy the machine's cores were during the run (0 to 1). */
  readonly cpuBusy: number;
}

export interface LatencyFigure {
  readonly system: DurableSystem;
  readonly decisions: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export interface DurableReport {
  readonly throughput: readonly ThroughputFigure[];
  readonly latency: readonly LatencyFigure[];
}

export interface DurableOptions {
  readonly postgresUrl: string;
  /** Turns per run (split between the worker processes). */
  readonly turns: number;
  /** Turns whose calls are decided, for the latency (two decisions each). */
  readonly decidedTurns: number;
  readonly log: (line: string) => void;
}

const CHILD = fileURLToPath(new URL('./durable-child.js', import.meta.url));
const now = (): number => performance.timeOrigin + performance.now();

interface Child {
  readonly process: ChildProcess;
  readonly lines: AsyncIterator<string>;
}

async function startChild(system: DurableSystem, url: string, schema: string, job: string, count: number): Promise<Child> {
  const child = spawn(process.execPath, [CHILD, system, url, schema, job, String(count)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.value !== 'ready')
    throw new Error(`The ${system} bench process did not start (it said ${JSON.stringify(first.value)}).`);
  return { process: child, lines };
}

/** Reads a child's lines until `done <statements> <cpu µs>`; `each` hears the others. */
async function finish(
  child: Child,
  each: (line: string) => void = () => undefined,
): Promise<{ statements: number; cpuUs: number }> {
  for (;;) {
    const next = await child.lines.next();
    if (next.done === true) throw new Error('A bench process ended before it said done.');
    const [tag, value, cpu] = next.value.split(' ');
    if (tag === 'done') return { statements: Number(value), cpuUs: Number(cpu) };
    each(next.value);
  }
}

/** The machine's CPU time so far (ms, every core: busy and in all). */
function machineCpu(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const { times } of cpus()) {
    busy += times.user + times.nice + times.sys + times.irq;
    total += times.user + times.nice + times.sys + times.irq + times.idle;
  }
  return { busy, total };
}

/** Log flushes so far (pg_stat_wal, Postgres 14 and later; NaN before). */
const FLUSHES = `(SELECT CASE WHEN to_regclass('pg_catalog.pg_stat_wal') IS NULL THEN 'NaN'::float8 ELSE (SELECT wal_sync::float8 FROM pg_stat_wal) END)`;

async function databaseBytes(db: pg.Pool, schema: string): Promise<{ wal: string; stored: number; flushes: number }> {
  const { rows } = await db.query(
    `SELECT pg_current_wal_lsn()::text AS wal, ${FLUSHES} AS flushes, coalesce((SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND n.nspname = $1), 0)::float8 AS stored`,
    [schema],
  );
  return { wal: String(rows[0]?.wal), stored: Number(rows[0]?.stored), flushes: Number(rows[0]?.flushes) };
}

/** How the log is read: pg_waldump and the run database's oid, or null (the server on another machine). */
interface WalReader {
  readonly dump: { bin: string; dir: string } | null;
  readonly oid: number;
}

/**
 * WAL bytes since `lsn`: with pg_waldump, the records of the run's database and of the
 * transactions that wrote them (other databases on the server write to the same log); without
 * it, the whole server's log growth.
 */
async function walSince(db: pg.Pool, wal: WalReader, lsn: string): Promise<number> {
  const { rows } = await db.query(
    'SELECT pg_current_wal_lsn()::text AS now, pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::float8 AS bytes',
    [lsn],
  );
  return wal.dump === null ? Number(rows[0]?.bytes) : databaseWal(wal.dump, lsn, String(rows[0]?.now), wal.oid);
}

async function throughput(
  db: pg.Pool,
  wal: WalReader,
  o: DurableOptions,
  system: DurableSystem,
  workers: number,
): Promise<ThroughputFigure> {
  const schema = `turnkit_durable_${process.pid}_${system}_${workers}`;
  await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
  if (system === 'turnkit') await (await openStore(o.postgresUrl, { schema })).close(); // migrated once, before the clock
  const share = Math.ceil(o.turns / workers);
  const children: Child[] = [];
  for (let i = 0; i < workers; i += 1) children.push(await startChild(system, o.postgresUrl, schema, 'run', share));
  const before = await databaseBytes(db, schema);
  const cpuBefore = machineCpu();
  const started = now();
  for (const child of children) child.process.stdin?.write('go\n');
  const done = await Promise.all(children.map((c) => finish(c)));
  const seconds = (now() - started) / 1000;
  const cpuAfter = machineCpu();
  const statements = done.reduce((a, b) => a + b.statements, 0);
  const workerCpuMs = done.reduce((a, b) => a + b.cpuUs, 0) / 1000;
  const busyMs = cpuAfter.busy - cpuBefore.busy;
  const walBytes = await walSince(db, wal, before.wal);
  await new Promise((resolve) => setTimeout(resolve, 1000)); // the ended sessions' statistics reach pg_stat_wal
  const after = await databaseBytes(db, schema);
  await db.query(`DROP SCHEMA ${schema} CASCADE`);
  const turns = share * workers;
  return {
    system,
    workers,
    turns,
    turnsPerSecond: turns / seconds,
    statementsPerTurn: statements / turns,
    walBytesPerTurn: walBytes / turns,
    storedBytesPerTurn: (after.stored - before.stored) / turns,
    flushesPerTurn: (after.flushes - before.flushes) / turns,
    workerCpuMsPerTurn: workerCpuMs / turns,
    otherCpuMsPerTurn: Math.max(0, busyMs - workerCpuMs) / turns,
    cpuBusy: busyMs / Math.max(1, cpuAfter.total - cpuBefore.total),
  };
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** turnkit: this process decides each parked call; a worker process runs the turn again, the tool says when. */
async function turnkitLatency(o: DurableOptions): Promise<number[]> {
  const schema = `turnkit_durable_${process.pid}_latency`;
  const store = await openStore(o.postgresUrl, { schema });
  const child = await startChild('turnkit', o.postgresUrl, schema, 'approve', 0);
  const ran = new Map<string, number>();
  const done = finish(child, (line) => {
    const [tag, turn, at] = line.split(' ');
    if (tag === 'ran' && turn !== undefined) ran.set(turn, Number(at));
  });
  child.process.stdin?.write('go\n');
  const latencies: number[] = [];
  for (let i = 0; i < o.decidedTurns; i += 1) {
    const id = await store.submit({ agent: 'bench', input: 'add twice' });
    for (let call = 0; call < 2; call += 1) {
      let turn = await store.get(id);
      while (turn?.parked.length !== 1) turn = (await new Promise((r) => setTimeout(r, 2)), await store.get(id));
      const callId = turn.parked[0]?.call.id ?? '';
      ran.delete(id);
      const decided = now();
      await store.decide(id, { [callId]: { type: 'approve' } });
      while (!ran.has(id)) await new Promise((r) => setTimeout(r, 1));
      latencies.push((ran.get(id) as number) - decided);
    }
  }
  child.process.stdin?.end();
  await done;
  await store.close();
  const db = new pg.Pool({ connectionString: o.postgresUrl, max: 1 });
  await db.query(`DROP SCHEMA ${schema} CASCADE`);
  await db.end();
  return latencies;
}

/** LangGraph: the process that decides resumes the graph itself; the tool says when it runs. */
async function langgraphLatency(db: pg.Pool, o: DurableOptions): Promise<number[]> {
  const schema = `turnkit_durable_${process.pid}_lglatency`;
  await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
  const child = await startChild('langgraph', o.postgresUrl, schema, 'approve', o.decidedTurns);
  const latencies: number[] = [];
  child.process.stdin?.write('go\n');
  await finish(child, (line) => {
    const [tag, ms] = line.split(' ');
    if (tag === 'latency') latencies.push(Number(ms));
  });
  await db.query(`DROP SCHEMA ${schema} CASCADE`);
  return latencies;
}

export async function runDurableBench(o: DurableOptions): Promise<DurableReport> {
  const db = new pg.Pool({ connectionString: o.postgresUrl, max: 2 });
  const admin = new pg.Client({ connectionString: o.postgresUrl });
  await admin.connect();
  try {
    const oid = Number((await admin.query('SELECT oid FROM pg_database WHERE datname = current_database()')).rows[0]?.oid);
    const wal: WalReader = { dump: await walDump(admin), oid };
    const figures: ThroughputFigure[] = [];
    for (const workers of [1, 2, 4]) {
      for (const system of ['turnkit', 'langgraph'] as const) {
        o.log(`Durable: ${SYSTEM_NAMES[system]}, ${workers} worker process(es), ${o.turns} turns…`);
        figures.push(await throughput(db, wal, o, system, workers));
      }
    }
    o.log(`Durable: decision-to-running latency, ${o.decidedTurns} turns with two approvals each…`);
    const latency: LatencyFigure[] = [];
    for (const [system, values] of [
      ['turnkit', await turnkitLatency(o)],
      ['langgraph', await langgraphLatency(db, o)],
    ] as const) {
      latency.push({ system, decisions: values.length, p50Ms: percentile(values, 50), p99Ms: percentile(values, 99) });
    }
    return { throughput: figures, latency };
  } finally {
    await admin.end();
    await db.end();
  }
}
