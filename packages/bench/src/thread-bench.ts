// The thread comparison (`pnpm bench --durable --thread --postgres URL`): one conversation of N
// turns (default 500) on one Postgres, turnkit's store (`store.submit({ thread })`, one worker in
// this process) against LangChain `createAgent` with LangGraph's `PostgresSaver` on the same
// thread_id. Each turn is a 500-byte user message, one tool call whose output is 2 KB, and an
// answer. Measured per turn over turns 1–10 and the last ten: write-ahead log bytes, stored bytes
// and the time per turn (submit to answer), and the bytes of the turn's new messages (as JSON);
// after the last turn, the time to load the thread's context (what its next turn starts from:
// turnkit's claim reads it, LangGraph's `getTuple`). Both systems run in a database of their own
// (a schema each), made for the run and dropped after it; WAL bytes are that database's own
// (pg_waldump, as the long-turn bench counts them), so other databases on the server do not count.

import { defineTool } from '@turnkit/dispatch';
import type { Model, ModelResponse } from '@turnkit/core';
import { createWorker, openStore } from '@turnkit/store';
import { openSql, readThreadContext } from '@turnkit/store/internal';
import pg from 'pg';
import { z } from 'zod';
import { databaseUrl, databaseWal, walDump } from './durable-long.js';
import { importPeer } from './peer-install.js';

export type ThreadSystem = 'turnkit' | 'langgraph';

export const THREAD_SYSTEM_NAMES: Record<ThreadSystem, string> = {
  turnkit: 'turnkit store, `submit({ thread })`',
  langgraph: 'LangChain createAgent + LangGraph PostgresSaver, one thread_id',
};

/** What the turns of one window cost, per turn. */
export interface ThreadWindow {
  readonly from: number;
  readonly to: number;
  readonly walBytesPerTurn: number;
  readonly storedBytesPerTurn: number;
  /** The median time of a turn in the window (ms). */
  readonly msPerTurn: number;
  /**
   * Bytes of the messages each turn added, as JSON (the user message, the model's call, the tool's
   * result, the answer, as turnkit's transcript holds them); the same messages on both sides.
   */
  readonly messageBytesPerTurn: number;
}

export interface ThreadFigure {
  readonly system: ThreadSystem;
  readonly turns: number;
  readonly first: ThreadWindow;
  readonly last: ThreadWindow;
  /** The median time to load the thread's context after the last turn (ms, over 20 loads). */
  readonly loadMs: number;
  /** Messages in that context. */
  readonly contextMessages: number;
  /** The schema's size after the last turn. */
  readonly storedBytes: number;
  /** How WAL bytes were measured: the run database's own (pg_waldump), or the whole server's log. */
  readonly wal: 'database' | 'server';
}

export interface ThreadBenchOptions {
  readonly postgresUrl: string;
  readonly turns: number;
  readonly log: (line: string) => void;
}

/** The window size at each end of the thread. */
const WINDOW = 10;

/** The i-th user message: 500 bytes. */
export const userMessage = (i: number): string => `Message ${i} about order A-${i}. `.padEnd(500, 'x');
/** The tool's output: 2 KB. */
const lookupOutput = (order: string): string => `Order ${order}: `.padEnd(2048, 'y');
const ANSWER = 'Order found: it shipped on Monday and arrives on Thursday.';

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

const now = (): number => performance.now();

/** Where the run's write-ahead log is read: the server's log position, and pg_waldump over the run's database when at hand. */
interface WalReader {
  readonly admin: pg.Client;
  readonly dump: { bin: string; dir: string } | null;
  /** The run database's oid. */
  readonly oid: number;
}

/** The server's write-ahead log position and the schema's size. */
async function mark(wal: WalReader, db: pg.Pool, schema: string): Promise<{ lsn: string; stored: number }> {
  const lsn = String((await wal.admin.query('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]?.lsn);
  const { rows } = await db.query(
    `SELECT coalesce((SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'm') AND n.nspname = $1), 0)::float8 AS stored`,
    [schema],
  );
  return { lsn, stored: Number(rows[0]?.stored) };
}

/** WAL bytes between two positions: the run database's records and its transactions' (or, without pg_waldump, the server's). */
async function walBetween(wal: WalReader, from: string, to: string): Promise<number> {
  if (wal.dump !== null) return databaseWal(wal.dump, from, to, wal.oid);
  const { rows } = await wal.admin.query('SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::float8 AS bytes', [to, from]);
  return Number(rows[0]?.bytes);
}

/**
 * Runs `turn(i)` for i = 1..turns, measuring the first and last WINDOW turns. `turn` returns the
 * bytes of the messages the turn added (null: the other system's count for the same turn, `messageBytes`).
 * `load` is timed after the last turn (20 times; the median).
 */
async function measure(
  wal: WalReader,
  db: pg.Pool,
  schema: string,
  system: ThreadSystem,
  o: ThreadBenchOptions,
  turn: (i: number) => Promise<number | null>,
  load: () => Promise<number>,
  messageBytes: (i: number) => number = () => Number.NaN,
): Promise<ThreadFigure> {
  const windows: ThreadWindow[] = [];
  let start: { lsn: string; stored: number } | null = null;
  let times: number[] = [];
  let bytes = 0;
  const lastFrom = Math.max(WINDOW + 1, o.turns - WINDOW + 1);
  for (let i = 1; i <= o.turns; i += 1) {
    const opens = i === 1 || i === lastFrom;
    if (opens) {
      start = await mark(wal, db, schema);
      times = [];
      bytes = 0;
    }
    const began = now();
    const added = await turn(i);
    times.push(now() - began);
    bytes += added ?? messageBytes(i);
    const closes = i === WINDOW || i === o.turns;
    if (closes && start !== null) {
      const end = await mark(wal, db, schema);
      const count = times.length;
      windows.push({
        from: i - count + 1,
        to: i,
        walBytesPerTurn: (await walBetween(wal, start.lsn, end.lsn)) / count,
        storedBytesPerTurn: (end.stored - start.stored) / count,
        msPerTurn: median(times),
        messageBytesPerTurn: bytes / count,
      });
      start = null;
    }
    if (i % 50 === 0) o.log(`  ${system}: turn ${i} of ${o.turns}`);
  }
  const loads: number[] = [];
  let contextMessages = 0;
  for (let k = 0; k < 20; k += 1) {
    const began = now();
    contextMessages = await load();
    loads.push(now() - began);
  }
  const { stored } = await mark(wal, db, schema);
  return {
    system,
    turns: o.turns,
    first: windows[0] as ThreadWindow,
    last: windows[windows.length - 1] as ThreadWindow,
    loadMs: median(loads),
    contextMessages,
    storedBytes: stored,
    wal: wal.dump === null ? 'server' : 'database',
  };
}

/** The bytes of a turn's messages as JSON (what `store.get` gives back for the turn). */
const jsonBytes = (messages: readonly unknown[]): number =>
  messages.reduce<number>((sum, m) => sum + Buffer.byteLength(JSON.stringify(m)), 0);

async function turnkitThread(
  wal: WalReader,
  db: pg.Pool,
  url: string,
  o: ThreadBenchOptions,
  bytesOf: Map<number, number>,
): Promise<ThreadFigure> {
  const schema = `turnkit_thread_turnkit`;
  await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  const store = await openStore(url, { schema });
  const lookup = defineTool({
    name: 'lookup',
    description: 'Finds an order.',
    input: z.object({ order: z.string() }),
    readOnly: true,
    execute: ({ order }) => lookupOutput(order),
  });
  const model: Model = {
    async generate({ messages }): Promise<ModelResponse> {
      const last = messages.at(-1);
      if (last?.role === 'tool') return { text: ANSWER, toolCalls: [] };
      const order = /order (A-\d+)/.exec(last?.role === 'user' ? last.content : '')?.[1] ?? 'A-0';
      return { text: '', toolCalls: [{ id: `c${messages.length}`, name: 'lookup', input: { order } }] };
    },
  };
  const worker = createWorker({ store, agents: { support: { model, tools: [lookup] } }, concurrency: 1 });
  const thread = 'customer-42';
  const sql = await openSql(url, { schema });
  try {
    return await measure(
      wal,
      db,
      schema,
      'turnkit',
      o,
      async (i) => {
        const id = await store.submit({ agent: 'support', input: userMessage(i), thread });
        await worker.runUntilIdle();
        const turn = await store.get(id);
        if (turn?.status !== 'stopped' || turn.transcript.at(-1)?.role !== 'assistant')
          throw new Error(`turnkit: turn ${i} of the thread ended ${turn?.status}, not with an answer.`);
        const bytes = jsonBytes(turn.transcript);
        bytesOf.set(i, bytes);
        return bytes;
      },
      // What a claim of the thread's next turn reads: the context (the same statement the worker's claim runs).
      async () => (await readThreadContext(sql, thread)).length,
    );
  } finally {
    await sql.close();
    await store.close();
    await db.query(`DROP SCHEMA ${schema} CASCADE`);
  }
}

interface LangChain {
  createAgent(options: object): {
    invoke(input: unknown, config: object): Promise<{ messages: { content: unknown; type?: string }[] }>;
  };
  tool(fn: (input: { order: string }) => Promise<string>, options: object): unknown;
}
interface Saver {
  setup(): Promise<void>;
  end(): Promise<void>;
  getTuple(config: object): Promise<{ checkpoint: { channel_values: { messages?: unknown[] } } } | undefined>;
}

async function langgraphThread(
  wal: WalReader,
  db: pg.Pool,
  url: string,
  o: ThreadBenchOptions,
  bytesOf: ReadonlyMap<number, number>,
): Promise<ThreadFigure> {
  const schema = `turnkit_thread_langgraph`;
  await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
  const { createAgent, tool } = await importPeer<LangChain>('langchain');
  const { AIMessage } = await importPeer<{ AIMessage: new (fields: string | object) => unknown }>('@langchain/core/messages');
  const { fakeModel } = await importPeer<{ fakeModel(): { respond(m: unknown): unknown } }>('@langchain/core/testing');
  const { z: pz } = await importPeer<{ z: { object(s: object): unknown; string(): unknown } }>('zod');
  const { PostgresSaver } = await importPeer<{ PostgresSaver: { fromConnString(url: string, o: object): Saver } }>(
    '@langchain/langgraph-checkpoint-postgres',
  );
  const checkpointer = PostgresSaver.fromConnString(url, { schema });
  await checkpointer.setup();
  // One model for the whole thread: each turn's two replies queued in order. The tool call is an
  // AIMessage with empty content (`respondWithTools` derives its content from every input message,
  // which would grow each reply with the thread and is no model's behaviour).
  const model = fakeModel();
  for (let i = 1; i <= o.turns; i += 1) {
    model.respond(
      new AIMessage({ content: '', tool_calls: [{ name: 'lookup', args: { order: `A-${i}` }, id: `c${i}`, type: 'tool_call' }] }),
    );
    model.respond(new AIMessage(ANSWER));
  }
  const lookup = tool(async ({ order }) => lookupOutput(order), {
    name: 'lookup',
    description: 'Finds an order.',
    schema: pz.object({ order: pz.string() }),
  });
  const agent = createAgent({ model, tools: [lookup], checkpointer });
  const config = { configurable: { thread_id: 'customer-42' }, recursionLimit: 25 };
  try {
    return await measure(
      wal,
      db,
      schema,
      'langgraph',
      o,
      async (i) => {
        const result = await agent.invoke({ messages: [{ role: 'user', content: userMessage(i) }] }, config);
        if (result.messages.at(-1)?.content !== ANSWER)
          throw new Error(`LangGraph: turn ${i} of the thread did not end with the answer.`);
        return null;
      },
      async () => (await checkpointer.getTuple(config))?.checkpoint.channel_values.messages?.length ?? 0,
      (i) => bytesOf.get(i) ?? Number.NaN,
    );
  } finally {
    await checkpointer.end();
    await db.query(`DROP SCHEMA ${schema} CASCADE`);
  }
}

/**
 * Runs the thread for each system, turnkit first, in a database made for the run (dropped after it);
 * `CHECKPOINT` before each (when the role may), so neither starts with the other's dirty pages.
 */
export async function runThreadBench(o: ThreadBenchOptions): Promise<ThreadFigure[]> {
  const admin = new pg.Client({ connectionString: o.postgresUrl });
  await admin.connect();
  const database = `turnkit_thread_${process.pid}`;
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${database}`);
    const url = databaseUrl(o.postgresUrl, database);
    const oid = Number((await admin.query('SELECT oid FROM pg_database WHERE datname = $1', [database])).rows[0]?.oid);
    const wal: WalReader = { admin, dump: await walDump(admin), oid };
    const db = new pg.Pool({ connectionString: url, max: 2 });
    try {
      const figures: ThreadFigure[] = [];
      const bytesOf = new Map<number, number>();
      for (const system of ['turnkit', 'langgraph'] as const) {
        await db.query('CHECKPOINT').catch(() => undefined);
        o.log(`Thread: ${THREAD_SYSTEM_NAMES[system]}, ${o.turns} turns…`);
        figures.push(
          await (system === 'turnkit' ? turnkitThread(wal, db, url, o, bytesOf) : langgraphThread(wal, db, url, o, bytesOf)),
        );
      }
      return figures;
    } finally {
      await db.end();
    }
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
}
