// One process of the long-turn comparison (durable-long.ts starts one per run, each on a database
// of its own). It prints `ready` once set up, waits for `go` on stdin, runs its turns one after
// another, prints `done <statements> <waits>` and exits. Statements are counted at the `pg` client
// of the system measured; `waits` are the statements this process sent only to learn that a turn
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
import { model as scenarioModel } from './store-bench.js';

const [system, url, roundsArg, turnsArg] = process.argv.slice(2) as [string, string, string, string];
const rounds = Number(roundsArg);
const turns = Number(turnsArg);
const say = (line: string): void => void process.stdout.write(`${line}\n`);

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

function go(): Promise<void> {
  return new Promise((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.on('line', (line) => {
      if (line === 'go') {
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

function agent() {
  const add = defineTool({
    name: 'add',
    description: 'add',
    input: z.object({ a: z.number(), b: z.number() }),
    readOnly: true,
    execute: ({ a, b }) => a + b,
  });
  const echo = defineTool({
    name: 'echo',
    description: 'echo',
    input: z.object({ round: z.number() }),
    readOnly: true,
    execute: () => output(),
  });
  return rounds === 0
    ? { model: scenarioModel, tools: [add] }
    : { model: longModel, tools: [echo], limits: { maxIterations: rounds + 1 } };
}

async function turnkit(): Promise<string> {
  const statements = countStatements(pg.Client as unknown as PgClientClass);
  const store = await openStore(url);
  const worker = createWorker({ store, agents: { bench: agent() }, concurrency: 1 });
  say('ready');
  await go();
  for (let i = 0; i < turns; i += 1) await store.submit({ agent: 'bench', input: 'go' });
  await worker.runUntilIdle();
  await store.close();
  return `${statements()} 0`;
}

async function dbos(): Promise<string> {
  // The turn's end is read on a client of its own, not counted (the adapter's API has no wait).
  const watcher = new pg.Client({ connectionString: url });
  const statements = countStatements(pg.Client as unknown as PgClientClass, (client) => client === watcher);
  const turnsApi = await createDbosTurns({ databaseUrl: url, agents: { bench: agent() }, logLevel: 'error' });
  await watcher.connect();
  say('ready');
  await go();
  let waits = 0;
  for (let i = 0; i < turns; i += 1) {
    const id = await turnsApi.submit({ agent: 'bench', input: 'go' });
    for (;;) {
      waits += 1;
      const { rows } = await watcher.query('SELECT status FROM turnkit_dbos.turns WHERE id = $1', [id]);
      const status = String(rows[0]?.status);
      if (status === 'stopped') break;
      if (status === 'failed' || status === 'cancelled') throw new Error(`the DBOS turn ended ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }
  await watcher.end();
  await turnsApi.close();
  return `${statements()} ${waits}`;
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
  const add = tool(async (input) => String((input as { a: number; b: number }).a + (input as { a: number; b: number }).b), {
    name: 'add',
    description: 'add',
    schema: pz.object({ a: pz.number(), b: pz.number() }),
  });
  const echo = tool(async () => output(), { name: 'echo', description: 'echo', schema: pz.object({ round: pz.number() }) });
  say('ready');
  await go();
  for (let i = 0; i < turns; i += 1) {
    const model = fakeModel();
    if (rounds === 0) {
      ADD_INPUTS.forEach((input, n) => {
        model.respond(calling('add', input, `c${n}`));
      });
      model.respond(new AIMessage({ content: EXPECTED_TEXT }));
    } else {
      for (let n = 0; n < rounds; n += 1) model.respond(calling('echo', { round: n }, `c${n}`));
      model.respond(new AIMessage({ content: 'echoed' }));
    }
    const graph = createAgent({ model, tools: [rounds === 0 ? add : echo], checkpointer });
    const config = { configurable: { thread_id: `${process.pid}_${i}` }, recursionLimit: 2 * Math.max(rounds, 2) + 10 };
    await graph.invoke({ messages: [{ role: 'user', content: 'go' }] }, config);
  }
  await checkpointer.end();
  return `${statements()} 0`;
}

const counts = system === 'turnkit' ? await turnkit() : system === 'dbos' ? await dbos() : await langgraph();
say(`done ${counts}`);
process.exit(0); // the peers' pools and stdin would keep the process alive
