// Durable turns: the bench scenario run through @turnkit/store and one worker, on PGlite (a data
// directory) and on Postgres. Measured at the SQL seam (every statement the store runs, counted
// and its parameters sized) and in the database (WAL written, table and index bytes kept).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Model, ModelRequest } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import { createWorker } from '@turnkit/store';
import { createStore, openSql, type Sql, type SqlQuery } from '@turnkit/store/internal';
import { z } from 'zod';
import { ADD_INPUTS, EXPECTED_TEXT, verifyOutcome } from './scenario.js';

export interface StoreFigure {
  readonly backend: string;
  readonly turns: number;
  readonly statementsPerTurn: number;
  readonly writeStatementsPerTurn: number;
  readonly transactionsPerTurn: number;
  /** Bytes of the parameters of write statements (the state, messages, results as JSON), per turn. */
  readonly payloadBytesPerTurn: number;
  /**
   * Write-ahead log written per turn: on Postgres with pg_walinspect the store's own (the sum of
   * `walParts`), else the log's growth while the turns ran (other sessions' writes included).
   */
  readonly walBytesPerTurn: number;
  /** Growth of the store's tables and indexes, per turn. */
  readonly storedBytesPerTurn: number;
  /** Postgres only: the WAL per turn by what it was written for (pg_walinspect), and the log flushes per turn. */
  readonly walParts?: Readonly<Record<string, number>>;
  readonly flushesPerTurn?: number;
  /** Turns per second through one worker running one turn at a time, and four at a time. */
  readonly turnsPerSecond: number;
  readonly turnsPerSecondConcurrent: number;
}

/** The scenario's model for a worker: it answers from the transcript (one model serves every turn). */
export const model: Model = {
  async generate(request: ModelRequest) {
    const results = request.messages.filter((m) => m.role === 'tool').length;
    const input = ADD_INPUTS[results];
    if (input === undefined) return { text: EXPECTED_TEXT, toolCalls: [], finishReason: 'stop' };
    return { text: '', toolCalls: [{ id: `c${results}`, name: 'add', input }], finishReason: 'tool_calls' };
  },
};
/** The bench scenario's tool: adds two numbers (shared by every durable bench process). */
export const add = defineTool({
  name: 'add',
  description: 'add',
  input: z.object({ a: z.number(), b: z.number() }),
  readOnly: true,
  execute: ({ a, b }) => a + b,
});

interface Counts {
  statements: number;
  writes: number;
  transactions: number;
  payloadBytes: number;
}

const WRITE = /\b(INSERT|UPDATE|DELETE)\b/i;

/** The connection, counting statements, transactions and the bytes of write parameters. */
function counting(sql: Sql, counts: Counts): Sql {
  const count =
    (target: SqlQuery): SqlQuery['query'] =>
    (text, params) => {
      counts.statements += 1;
      if (WRITE.test(text)) {
        counts.writes += 1;
        for (const p of params ?? [])
          counts.payloadBytes += Buffer.byteLength(typeof p === 'string' ? p : (JSON.stringify(p) ?? ''));
      }
      return target.query(text, params);
    };
  return {
    kind: sql.kind,
    query: count(sql),
    transaction: (work) => {
      counts.transactions += 1;
      return sql.transaction((tx) => work({ query: count(tx) }));
    },
    close: () => sql.close(),
  };
}

async function walLsn(sql: Sql): Promise<string> {
  const [row] = await sql.query('SELECT pg_current_wal_lsn()::text AS lsn');
  return String(row?.lsn);
}

async function walSince(sql: Sql, lsn: string): Promise<number> {
  const [row] = await sql.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::float8 AS bytes', [lsn]);
  return Number(row?.bytes);
}

async function storedBytes(sql: Sql): Promise<number> {
  const [row] = await sql.query(
    `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::float8 AS bytes FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind = 'r' AND c.relname LIKE 'turnkit\\_%' AND n.nspname = current_schema()`,
  );
  return Number(row?.bytes);
}

/** What each WAL record was written for: a table, its indexes, commits, or the rest. */
const WAL_PART = `CASE
  WHEN r.relname = 'turnkit_turns' THEN 'turn rows'
  WHEN r.relname LIKE 'turnkit\\_turns\\_%' THEN 'turn row indexes'
  WHEN r.relname = 'turnkit_log' THEN 'log rows'
  WHEN r.relname LIKE 'turnkit\\_log\\_%' THEN 'log index'
  WHEN r.relname LIKE 'turnkit\\_tool\\_results%' THEN 'journal rows and index'
  WHEN r.relname LIKE 'turnkit\\_inbox%' THEN 'inbox'
  WHEN r.resource_manager = 'Transaction' THEN 'commit records'
  ELSE 'other' END`;

/**
 * Postgres: the WAL between two positions by part (pg_walinspect, created in the scratch schema):
 * the records of this schema's relations and every record (their commits) of the transactions
 * that wrote them, so other sessions on the server do not count. Log flushes are read apart.
 */
async function walParts(sql: Sql, from: string, to: string): Promise<Record<string, number> | undefined> {
  try {
    await sql.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    await sql.query('SELECT txid_current()'); // a commit that waits for the flush: `to` is on disk
    const rows = await sql.query(
      `WITH r AS (
         SELECT r.resource_manager, r.xid, r.record_length, c.relname
         FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn) r
         LEFT JOIN pg_class c ON c.relfilenode = substring(r.block_ref FROM 'rel \\d+/\\d+/(\\d+)')::oid
           AND substring(r.block_ref FROM 'rel \\d+/(\\d+)/')::oid = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())),
       ours AS (SELECT DISTINCT xid FROM r WHERE relname IS NOT NULL AND xid <> 0)
       SELECT ${WAL_PART} AS part, sum(r.record_length)::float8 AS bytes
       FROM r
       WHERE r.relname IS NOT NULL OR r.xid IN (SELECT xid FROM ours)
       GROUP BY 1`,
      [from, to],
    );
    return Object.fromEntries(rows.map((r) => [String(r.part), Number(r.bytes)]));
  } catch {
    return undefined; // pg_walinspect is not installed (it ships with Postgres 15 and later), or not allowed
  }
}

async function flushes(sql: Sql): Promise<number | undefined> {
  try {
    const [row] = await sql.query('SELECT wal_sync::float8 AS n FROM pg_stat_wal');
    return Number(row?.n);
  } catch {
    return undefined;
  }
}

/** Submits `turns` turns, runs them with one worker, checks every one ended as the scenario says; returns the seconds. */
async function runTurns(sql: Sql, counts: Counts, turns: number, concurrency: number): Promise<number> {
  const store = createStore(counting(sql, counts));
  const ids: string[] = [];
  for (let i = 0; i < turns; i += 1) ids.push(await store.submit({ agent: 'bench', input: 'add twice' }));
  // The store is the bench's own: the worker takes any runnable turn (these ones).
  const worker = createWorker({ store, agents: { bench: { model, tools: [add] } }, concurrency });
  const started = performance.now();
  await worker.runUntilIdle();
  const seconds = (performance.now() - started) / 1000;
  const reader = createStore(sql); // reading back is not part of a turn: not counted
  for (const id of ids) {
    const turn = await reader.get(id);
    const results = (turn?.transcript ?? []).flatMap((m) => (m.role === 'tool' ? [m.result.output] : []));
    const last = turn?.transcript[turn.transcript.length - 1];
    verifyOutcome(`store (${sql.kind})`, { toolResults: results, text: last?.role === 'assistant' ? last.content : '' });
  }
  return seconds;
}

/** Measures one backend: `sql` is a migrated, empty store database. */
async function measure(backend: string, sql: Sql, turns: number): Promise<StoreFigure> {
  const ignored: Counts = { statements: 0, writes: 0, transactions: 0, payloadBytes: 0 };
  await runTurns(sql, ignored, Math.max(5, Math.floor(turns / 10)), 1); // warm-up
  const counts: Counts = { statements: 0, writes: 0, transactions: 0, payloadBytes: 0 };
  const lsn = await walLsn(sql);
  const before = await storedBytes(sql);
  const syncedBefore = sql.kind === 'postgres' ? await flushes(sql) : undefined;
  const seconds = await runTurns(sql, counts, turns, 1);
  const syncedAfter = sql.kind === 'postgres' ? await flushes(sql) : undefined;
  const parts = sql.kind === 'postgres' ? await walParts(sql, lsn, await walLsn(sql)) : undefined;
  // On Postgres, the store's own records (other sessions on the server write to the same log); the log's growth without pg_walinspect.
  const wal = parts === undefined ? await walSince(sql, lsn) : Object.values(parts).reduce((a, b) => a + b, 0);
  const stored = (await storedBytes(sql)) - before;
  const concurrentSeconds = await runTurns(sql, ignored, turns, 4);
  const perTurn = (n: number): number => n / turns;
  return {
    backend,
    turns,
    statementsPerTurn: perTurn(counts.statements),
    writeStatementsPerTurn: perTurn(counts.writes),
    transactionsPerTurn: perTurn(counts.transactions),
    payloadBytesPerTurn: perTurn(counts.payloadBytes),
    walBytesPerTurn: perTurn(wal),
    storedBytesPerTurn: perTurn(stored),
    turnsPerSecond: turns / seconds,
    turnsPerSecondConcurrent: turns / concurrentSeconds,
    ...(parts === undefined ? {} : { walParts: Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, perTurn(v)])) }),
    ...(syncedBefore === undefined || syncedAfter === undefined ? {} : { flushesPerTurn: perTurn(syncedAfter - syncedBefore) }),
  };
}

export interface StoreBenchOptions {
  readonly turns: number;
  /** A Postgres to measure too (a scratch schema is made and dropped). */
  readonly postgresUrl?: string;
  readonly log: (line: string) => void;
}

export async function runStoreBench(options: StoreBenchOptions): Promise<StoreFigure[]> {
  const figures: StoreFigure[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'turnkit-bench-store-'));
  try {
    options.log(`Store on PGlite (a data directory): ${options.turns} turns…`);
    const sql = await openSql(join(dir, 'data'));
    try {
      figures.push(await measure('PGlite (data directory)', sql, options.turns));
    } finally {
      await sql.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (options.postgresUrl !== undefined) {
    options.log(`Store on Postgres: ${options.turns} turns…`);
    const schema = `turnkit_bench_${process.pid}`;
    const sql = await openSql(options.postgresUrl, { schema });
    try {
      figures.push(await measure('Postgres', sql, options.turns));
      await sql.query(`DROP SCHEMA ${schema} CASCADE`);
    } finally {
      await sql.close();
    }
  }
  return figures;
}
