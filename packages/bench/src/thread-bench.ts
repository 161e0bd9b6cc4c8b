// The thread comparison (`pnpm bench --durable --thread --postgres URL`): one conversation of N
// turns (default 500) on one Postgres, turnkit's store (`store.submit({ thread })`, one worker in
// this process) against LangChain `createAgent` with LangGraph's `PostgresSaver` on the same
// thread_id. Each turn is a 500-byte user message, one tool call whose output is 2 KB, and an
// answer. Measured per turn over turns 1–10 and the last ten: write-ahead log bytes, stored bytes
// and the time per turn (submit to answer); after the last turn, the time to load the thread's
// context (what its next turn starts from: turnkit's claim reads it, LangGraph's `getTuple`).
// Each system runs in a fresh schema; nothing else should write to the database meanwhile (WAL is
// the cluster's).

import { defineTool } from '@turnkit/dispatch';
import type { Model, ModelResponse } from '@turnkit/core';
import { createWorker, openStore } from '@turnkit/store';
import { openSql, readThreadContext } from '@turnkit/store/internal';
import pg from 'pg';
import { z } from 'zod';
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

/** The database's write-ahead log position and the schema's size. */
async function mark(db: pg.Pool, schema: string): Promise<{ lsn: string; stored: number }> {
  const { rows } = await db.query(
    `SELECT pg_current_wal_lsn()::text AS lsn, coalesce((SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'm') AND n.nspname = $1), 0)::float8 AS stored`,
    [schema],
  );
  return { lsn: String(rows[0]?.lsn), stored: Number(rows[0]?.stored) };
}

/**
 * Runs `turn(i)` for i = 1..turns, measuring the first and last WINDOW turns. `load` is timed after
 * the last turn (20 times; the median).
 */
async function measure(
  db: pg.Pool,
  schema: string,
  system: ThreadSystem,
  o: ThreadBenchOptions,
  turn: (i: number) => Promise<void>,
  load: () => Promise<number>,
): Promise<ThreadFigure> {
  const windows: ThreadWindow[] = [];
  let start: { lsn: string; stored: number } | null = null;
  let times: number[] = [];
  const lastFrom = Math.max(WINDOW + 1, o.turns - WINDOW + 1);
  for (let i = 1; i <= o.turns; i += 1) {
    const opens = i === 1 || i === lastFrom;
    if (opens) {
      start = await mark(db, schema);
      times = [];
    }
    const began = now();
    await turn(i);
    times.push(now() - began);
    const closes = i === WINDOW || i === o.turns;
    if (closes && start !== null) {
      const end = await mark(db, schema);
      const { rows } = await db.query('SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::float8 AS bytes', [end.lsn, start.lsn]);
      const count = times.length;
      windows.push({
        from: i - count + 1,
        to: i,
        walBytesPerTurn: Number(rows[0]?.bytes) / count,
        storedBytesPerTurn: (end.stored - start.stored) / count,
        msPerTurn: median(times),
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
  const { stored } = await mark(db, schema);
  return {
    system,
    turns: o.turns,
    first: windows[0] as ThreadWindow,
    last: windows[windows.length - 1] as ThreadWindow,
    loadMs: median(loads),
    contextMessages,
    storedBytes: stored,
  };
}

async function turnkitThread(db: pg.Pool, o: ThreadBenchOptions): Promise<ThreadFigure> {
  const schema = `turnkit_thread_${process.pid}_turnkit`;
  await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  const store = await openStore(o.postgresUrl, { schema });
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
  const sql = await openSql(o.postgresUrl, { schema });
  try {
    return await measure(
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

async function langgraphThread(db: pg.Pool, o: ThreadBenchOptions): Promise<ThreadFigure> {
  const schema = `turnkit_thread_${process.pid}_langgraph`;
  await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
  const { createAgent, tool } = await importPeer<LangChain>('langchain');
  const { AIMessage } = await importPeer<{ AIMessage: new (fields: string | object) => unknown }>('@langchain/core/messages');
  const { fakeModel } = await importPeer<{ fakeModel(): { respond(m: unknown): unknown } }>('@langchain/core/testing');
  const { z: pz } = await importPeer<{ z: { object(s: object): unknown; string(): unknown } }>('zod');
  const { PostgresSaver } = await importPeer<{ PostgresSaver: { fromConnString(url: string, o: object): Saver } }>(
    '@langchain/langgraph-checkpoint-postgres',
  );
  const checkpointer = PostgresSaver.fromConnString(o.postgresUrl, { schema });
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
      db,
      schema,
      'langgraph',
      o,
      async (i) => {
        const result = await agent.invoke({ messages: [{ role: 'user', content: userMessage(i) }] }, config);
        if (result.messages.at(-1)?.content !== ANSWER)
          throw new Error(`LangGraph: turn ${i} of the thread did not end with the answer.`);
      },
      async () => (await checkpointer.getTuple(config))?.checkpoint.channel_values.messages?.length ?? 0,
    );
  } finally {
    await checkpointer.end();
    await db.query(`DROP SCHEMA ${schema} CASCADE`);
  }
}

/** Runs the thread for each system, turnkit first; `CHECKPOINT` before each (when the role may), so neither starts with the other's dirty pages. */
export async function runThreadBench(o: ThreadBenchOptions): Promise<ThreadFigure[]> {
  const db = new pg.Pool({ connectionString: o.postgresUrl, max: 2 });
  try {
    const figures: ThreadFigure[] = [];
    for (const system of ['turnkit', 'langgraph'] as const) {
      await db.query('CHECKPOINT').catch(() => undefined);
      o.log(`Thread: ${THREAD_SYSTEM_NAMES[system]}, ${o.turns} turns…`);
      figures.push(await (system === 'turnkit' ? turnkitThread(db, o) : langgraphThread(db, o)));
    }
    return figures;
  } finally {
    await db.end();
  }
}
