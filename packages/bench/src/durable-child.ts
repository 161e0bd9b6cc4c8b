// One worker process of the durable comparison (durable.ts starts 1, 2 or 4 of them on one
// Postgres). It sets up, runs `WARMUP_TURNS` turns of the bench scenario untimed (with `run`; the
// same for both systems, and for the long-turn comparison's processes: durable-long-child.ts),
// prints `ready`, waits for `go` on stdin, does its share, prints `done <statements> <cpu µs>` and
// exits. Statements are counted at the `pg` client of the system measured, from `go` on.
//   node durable-child.js turnkit|langgraph <url> <schema> run <count>      the bench scenario
//   node durable-child.js turnkit <url> <schema> approve <count>            runs approved turns; prints `ran <turn> <epoch ms>`
//   node durable-child.js langgraph <url> <schema> approve <count>          parks, decides, prints `latency <ms>`
import { createInterface } from 'node:readline';
import { defineTool } from '@turnkit/dispatch';
import { createWorker, openStore } from '@turnkit/store';
import { z } from 'zod';
import { importPeer } from './peer-install.js';
import { ADD_INPUTS, EXPECTED_TEXT, verifyOutcome } from './scenario.js';
import { model as scenarioModel } from './store-bench.js';

const [system, url, schema, job, countArg] = process.argv.slice(2) as [string, string, string, string, string];
const count = Number(countArg);
const now = (): number => performance.timeOrigin + performance.now();
const say = (line: string): void => void process.stdout.write(`${line}\n`);

interface PgModule {
  readonly default?: { readonly Client: { prototype: { query: (...args: unknown[]) => unknown } } };
  readonly Client?: { prototype: { query: (...args: unknown[]) => unknown } };
}

/** Turns of the bench scenario each process runs before `ready` (job `run`), untimed and not counted. */
const WARMUP_TURNS = 5;

/** Counts every statement a `pg` module's clients send (pools use clients). */
function countStatements(pg: PgModule): () => number {
  const proto = (pg.Client ?? pg.default?.Client)?.prototype;
  if (proto === undefined) throw new Error('pg has no Client');
  let statements = 0;
  const query = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    statements += 1;
    return query.apply(this, args);
  };
  return () => statements;
}

/** The CPU this process had used when \`go\` came (its start-up is not the run's). */
let cpuAtGo: NodeJS.CpuUsage | undefined;
/** The statements counted when `go` came (the set-up's and the warm-up's are not the run's). */
let statementsAtGo = 0;

function go(statements: () => number): Promise<void> {
  return new Promise((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.on('line', (line) => {
      if (line === 'go') {
        cpuAtGo = process.cpuUsage();
        statementsAtGo = statements();
        lines.close();
        resolve();
      }
    });
  });
}

async function turnkit(): Promise<number> {
  const statements = countStatements((await import('pg')) as PgModule);
  const store = await openStore(url, { schema });
  const approving = job === 'approve';
  const add = defineTool({
    name: 'add',
    description: 'add',
    input: z.object({ a: z.number(), b: z.number() }),
    needsApproval: approving,
    // Without approvals it runs unasked, as the peer's tool does.
    readOnly: !approving,
    execute: ({ a, b }, ctx) => {
      if (approving) say(`ran ${ctx.turnId} ${now()}`);
      return a + b;
    },
  });
  const worker = createWorker({ store, agents: { bench: { model: scenarioModel, tools: [add] } }, concurrency: 1 });
  if (!approving) {
    for (let i = 0; i < WARMUP_TURNS; i += 1) await store.submit({ agent: 'bench', input: 'add twice' });
    await worker.runUntilIdle();
  }
  say('ready');
  await go(statements);
  if (approving) {
    worker.start();
    await new Promise<void>((resolve) => process.stdin.once('end', resolve).resume());
    await worker.stop();
  } else {
    for (let i = 0; i < count; i += 1) await store.submit({ agent: 'bench', input: 'add twice' });
    await worker.runUntilIdle();
  }
  await store.close();
  return statements() - statementsAtGo;
}

interface LangChain {
  createAgent(options: object): {
    invoke(input: unknown, config: object): Promise<{ messages: { content: unknown; type?: string }[] }>;
  };
  tool(fn: (input: { a: number; b: number }) => Promise<string>, options: object): unknown;
  humanInTheLoopMiddleware(options: object): unknown;
}
interface Saver {
  setup(): Promise<void>;
  end(): Promise<void>;
}

async function langgraph(): Promise<number> {
  const statements = countStatements(await importPeer<PgModule>('pg'));
  const { createAgent, tool, humanInTheLoopMiddleware } = await importPeer<LangChain>('langchain');
  const { AIMessage } = await importPeer<{ AIMessage: new (text: string) => unknown }>('@langchain/core/messages');
  const { fakeModel } = await importPeer<{
    fakeModel(): { respondWithTools(calls: object[]): unknown; respond(m: unknown): unknown };
  }>('@langchain/core/testing');
  const { Command } = await importPeer<{ Command: new (options: object) => unknown }>('@langchain/langgraph');
  const { z: pz } = await importPeer<{ z: { object(s: object): unknown; number(): unknown } }>('zod');
  const { PostgresSaver } = await importPeer<{ PostgresSaver: { fromConnString(url: string, o: object): Saver } }>(
    '@langchain/langgraph-checkpoint-postgres',
  );
  const checkpointer = PostgresSaver.fromConnString(url, { schema });
  await checkpointer.setup();
  let ranAt = 0;
  const add = tool(async ({ a, b }) => ((ranAt = now()), String(a + b)), {
    name: 'add',
    description: 'add',
    schema: pz.object({ a: pz.number(), b: pz.number() }),
  });
  const approving = job === 'approve';
  const middleware = approving ? [humanInTheLoopMiddleware({ interruptOn: { add: true } })] : [];
  /** The graph of one turn (its model answers the bench scenario) and its config, on its own thread. */
  const turn = (thread: string) => {
    const model = fakeModel();
    ADD_INPUTS.forEach((input, n) => {
      model.respondWithTools([{ name: 'add', args: input, id: `c${n}` }]);
    });
    model.respond(new AIMessage(EXPECTED_TEXT));
    const agent = createAgent({ model, tools: [add], checkpointer, middleware });
    return { agent, config: { configurable: { thread_id: thread }, recursionLimit: 25 } };
  };
  for (let i = 0; !approving && i < WARMUP_TURNS; i += 1) {
    const { agent, config } = turn(`${process.pid}_warm_${i}`);
    await agent.invoke({ messages: [{ role: 'user', content: 'add twice' }] }, config);
  }
  say('ready');
  await go(statements);
  for (let i = 0; i < count; i += 1) {
    const { agent, config } = turn(`${process.pid}_${i}`);
    let result = await agent.invoke({ messages: [{ role: 'user', content: 'add twice' }] }, config);
    // Each parked call: the decision, then the time until the graph runs the tool again.
    for (let n = 0; approving && n < ADD_INPUTS.length; n += 1) {
      const decided = now();
      result = await agent.invoke(new Command({ resume: { decisions: [{ type: 'approve' }] } }), config);
      say(`latency ${ranAt - decided}`);
    }
    const tools = result.messages.filter((m) => m.type === 'tool').map((m) => Number(m.content));
    verifyOutcome('LangGraph PostgresSaver', { toolResults: tools, text: String(result.messages.at(-1)?.content ?? '') });
  }
  await checkpointer.end();
  return statements() - statementsAtGo;
}

const statements = system === 'turnkit' ? await turnkit() : await langgraph();
// The CPU this process used since `go` (user + system, µs): the parent splits the machine's CPU by who used it.
const cpu = process.cpuUsage(cpuAtGo);
say(`done ${statements} ${cpu.user + cpu.system}`);
process.exit(0); // the peers' pools and stdin would keep the process alive
