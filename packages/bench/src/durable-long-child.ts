// One process of the long-turn comparison (durable-long.ts starts one per run, each on a database
// of its own). It sets up, runs `WARMUP_TURNS` turns of the bench scenario untimed (the same for
// every system: modules loaded, code compiled, connections open, the tables' first pages written),
// prints `ready`, waits for `go` on stdin, runs its turns one after another, prints `done
// <statements> <waits>` and exits. Statements are counted at the `pg` client of the system
// measured, from `go` on; `waits` are the statements this process sent only to learn that a turn
// on DBOS had ended (not the system's: the parent takes them out of the commits).
//   node durable-long-child.js turnkit|dbos|langgraph <url> <rounds> <turns>
// `rounds` 0 is the bench scenario (two `add` calls, then the answer); otherwise each turn is that
// many rounds of one `echo` call whose output is 2,048 characters of random base64 (incompressible
// to Postgres's compression), then the answer.
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { Model, ModelRequest } from '@turnkit/core';
import { createDbosTurns } from '@turnkit/dbos';
import { defineTool } from '@turnkit/dispatch';
import { createWorker, openStore } from '@turnkit/store';
import pg from 'pg';
import { z } from 'zod';
import { importPeer } from './peer-install.js';
import { ADD_INPUTS, EXPECTED_TEXT } from './scenario.js';
import { add, model as scenarioModel } from './store-bench.js';

const [system, url, roundsArg, turnsArg] = process.argv.slice(2) as [string, string, string, string];
const rounds = Number(roundsArg);
const turns = Number(turnsArg);
const say = (line: string): void => void process.stdout.write(`${line}\n`);

/** Turns of the bench scenario each system runs before `ready`, untimed and not counted (durable-child.ts: the same). */
const WARMUP_TURNS = 5;

/** Characters of each `echo` output. */
const OUTPUT_CHARS = 2048; // durable-long.ts: OUTPUT_CHARS
const output = (): string => randomBytes((OUTPUT_CHARS / 4) * 3).toString('base64');

interface PgClientClass {
  prototype: { query: (...args: unknown[]) => unknown };
}

/** Counts every statement a `pg` module's clients send (pools use clients), except `skip`'s. */
function countStatements(Client: PgClientClass, skip: (client: unknown) => boolean = () => false): () => number {
  let statements = 0;
  const query = Client.prototype.query;
  Client.prototype.query = function (this: unknown, ...args: unknown[]) {
    if (!skip(this)) statements += 1;
    return query.apply(this, args);
  };
  return () => statements;
}

/** The statements counted when `go` came (the set-up's and the warm-up's are not the run's). */
let statementsAtGo = 0;

function go(statements: () => number): Promise<void> {
  return new Promise((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.on('line', (line) => {
      if (line === 'go') {
        statementsAtGo = statements();
        lines.close();
        resolve();
      }
    });
  });
}

/** `rounds` rounds of one `echo` call each, then the answer. */
const longModel: Model = {
  async generate(request: ModelRequest) {
    const done = request.messages.filter((m) => m.role === 'tool').length;
    if (done >= rounds) return { text: 'echoed', toolCalls: [], finishReason: 'stop' };
    return { text: '', toolCalls: [{ id: `c${done}`, name: 'echo', input: { round: done } }], finishReason: 'tool_calls' };
  },
};

/** The bench scenario's agent: the warm-up's, and the run's at `rounds` 0. */
const scenarioAgent = { model: scenarioModel, tools: [add] };

function agent() {
  const echo = defineTool({
    name: 'echo',
    description: 'echo',
    input: z.object({ round: z.number() }),
    readOnly: true,
    execute: () => output(),
  });
  return rounds === 0 ? scenarioAgent : { model: longModel, tools: [echo], limits: { maxIterations: rounds + 1 } };
}

async function turnkit(): Promise<string> {
  const statements = countStatements(pg.Client as unknown as PgClientClass);
  const store = await openStore(url);
  const worker = createWorker({ store, agents: { bench: agent(), warm: scenarioAgent }, concurrency: 1 });
  for (let i = 0; i < WARMUP_TURNS; i += 1) await store.submit({ agent: 'warm', input: 'go' });
  await worker.runUntilIdle();
  say('ready');
  await go(statements);
  for (let i = 0; i < turns; i += 1) await store.submit({ agent: 'bench', input: 'go' });
  await worker.runUntilIdle();
  await store.close();
  return `${statements() - statementsAtGo} 0`;
}

async function dbos(): Promise<string> {
  // The turn's end is read on a client of its own, not counted (the adapter's API has no wait).
  const watcher = new pg.Client({ connectionString: url });
  const statements = countStatements(pg.Client as unknown as PgClientClass, (client) => client === watcher);
  const turnsApi = await createDbosTurns({
    databaseUrl: url,
    agents: { bench: agent(), warm: scenarioAgent },
    logLevel: 'error',
  });
  await watcher.connect();
  /** Runs one turn of `agent` to its end; returns the statements sent to see it end. */
  const turn = async (agent: string): Promise<number> => {
    const id = await turnsApi.submit({ agent, input: 'go' });
    for (let waits = 1; ; waits += 1) {
      const { rows } = await watcher.query('SELECT status FROM turnkit_dbos.turns WHERE id = $1', [id]);
      const status = String(rows[0]?.status);
      if (status === 'stopped') return waits;
      if (status === 'failed' || status === 'cancelled') throw new Error(`the DBOS turn ended ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  };
  for (let i = 0; i < WARMUP_TURNS; i += 1) await turn('warm');
  say('ready');
  await go(statements);
  let waits = 0;
  for (let i = 0; i < turns; i += 1) waits += await turn('bench');
  await watcher.end();
  await turnsApi.close();
  return `${statements() - statementsAtGo} ${waits}`;
}

interface LangChain {
  createAgent(options: object): { invoke(input: unknown, config: object): Promise<{ messages: { content: unknown }[] }> };
  tool(fn: (input: object) => Promise<string>, options: object): unknown;
}
interface Saver {
  setup(): Promise<void>;
  end(): Promise<void>;
}

async function langgraph(): Promise<string> {
  const peerPg = await importPeer<{ default?: { Client: PgClientClass }; Client?: PgClientClass }>('pg');
  const statements = countStatements((peerPg.Client ?? peerPg.default?.Client) as PgClientClass);
  const { createAgent, tool } = await importPeer<LangChain>('langchain');
  const { AIMessage } = await importPeer<{ AIMessage: new (fields: object) => unknown }>('@langchain/core/messages');
  // A reply with tool calls and empty content (the fake model's own `respondWithTools` would fill
  // its content with the request's messages, so each reply would hold the whole conversation).
  const calling = (name: string, args: object, id: string) =>
    new AIMessage({ content: '', tool_calls: [{ name, args, id, type: 'tool_call' }] });
  const { fakeModel } = await importPeer<{ fakeModel(): { respond(m: unknown): unknown } }>('@langchain/core/testing');
  const { z: pz } = await importPeer<{ z: { object(s: object): unknown; number(): unknown } }>('zod');
  const { PostgresSaver } = await importPeer<{ PostgresSaver: { fromConnString(url: string): Saver } }>(
    '@langchain/langgraph-checkpoint-postgres',
  );
  const checkpointer = PostgresSaver.fromConnString(url);
  await checkpointer.setup();
  const addTool = tool(async (input) => String((input as { a: number; b: number }).a + (input as { a: number; b: number }).b), {
    name: 'add',
    description: 'add',
    schema: pz.object({ a: pz.number(), b: pz.number() }),
  });
  const echo = tool(async () => output(), { name: 'echo', description: 'echo', schema: pz.object({ round: pz.number() }) });
  /** One turn of `n` rounds (0: the bench scenario) on its own thread. */
  const turn = async (n: number, thread: string): Promise<void> => {
    const model = fakeModel();
    if (n === 0) {
      ADD_INPUTS.forEach((input, k) => {
        model.respond(calling('add', input, `c${k}`));
      });
      model.respond(new AIMessage({ content: EXPECTED_TEXT }));
    } else {
      for (let k = 0; k < n; k += 1) model.respond(calling('echo', { round: k }, `c${k}`));
      model.respond(new AIMessage({ content: 'echoed' }));
    }
    const graph = createAgent({ model, tools: [n === 0 ? addTool : echo], checkpointer });
    const config = { configurable: { thread_id: thread }, recursionLimit: 2 * Math.max(n, 2) + 10 };
    await graph.invoke({ messages: [{ role: 'user', content: 'go' }] }, config);
  };
  for (let i = 0; i < WARMUP_TURNS; i += 1) await turn(0, `${process.pid}_warm_${i}`);
  say('ready');
  await go(statements);
  for (let i = 0; i < turns; i += 1) await turn(rounds, `${process.pid}_${i}`);
  await checkpointer.end();
  return `${statements() - statementsAtGo} 0`;
}

const counts = system === 'turnkit' ? await turnkit() : system === 'dbos' ? await dbos() : await langgraph();
say(`done ${counts}`);
process.exit(0); // the peers' pools and stdin would keep the process alive
