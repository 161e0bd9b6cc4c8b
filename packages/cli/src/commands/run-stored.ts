// `turnkit run <scenario> --store [url]`: the scenario's turn is stored. It is submitted for the
// agent named after the file (or, with --agent, for that agent of the file's `agents`, whole) and
// run by a worker in this process (only this turn); when it parks, the commands that decide it and
// the worker that continues it (`--agents <file>`) are printed.

import { type AgentDefinition, createWorker, type StoreClient, type StoredTurn, type SubmitOptions } from '@turnkit/store';
import { newTurnId } from '@turnkit/store/internal';
import { type DevLink, findDevLink } from '../dev-link.js';
import type { Model } from '@turnkit/core';
import { definedProps } from '@turnkit/core/internal';
import { oneLine, UsageError } from '../errors.js';
import { providerModel, type ProviderOptions } from '../provider.js';
import type { LoadedScenarioFile } from '../scenario.js';
import { safeText } from '../safe-text.js';
import { agentName, scenarioAgent } from './agents-file.js';
import { DEFAULT_STORE, exitFor, sayIfNew, turnLines, untilSettled, waitsBehind, withClient, withStore } from './store-common.js';

/** An agent of a file's `agents` (`--agent NAME`), its whole definition, and the user's message. */
export interface StoredAgent {
  readonly name: string;
  readonly definition: AgentDefinition;
  readonly input: string;
}

interface StoredRunBase {
  readonly scenarioFile: string;
  readonly provider: ProviderOptions | null;
  /** `--store` as given: true for the flag alone. */
  readonly store: string | true;
  /** `--id`: the stored turn's id. */
  readonly id?: string;
  /** `--thread`: the thread the turn continues. */
  readonly thread?: string;
  /** Flags that have no meaning for a stored turn, by name, when given. */
  readonly unsupported: readonly string[];
}

/** The scenario (its agent named after the file), or an agent of the file's `agents`. */
export type StoredRunOptions = StoredRunBase &
  (
    | { readonly scenario: LoadedScenarioFile; readonly agent?: never }
    | { readonly agent: StoredAgent; readonly scenario?: never }
  );

export async function runStoredCommand(o: StoredRunOptions): Promise<number> {
  if (o.unsupported.length > 0)
    throw new UsageError(
      `${o.unsupported.join(', ')} cannot be used with --store: a stored turn is read back with \`turnkit show <turn>\`.`,
    );
  const url = o.store === true ? DEFAULT_STORE : o.store;
  // An agent of the file's `agents` keeps its name; a scenario's agent is named after the file.
  const { name: agent, input } =
    o.agent === undefined
      ? { name: o.scenario.agent ?? agentName(o.scenarioFile), input: o.scenario.input }
      : { name: o.agent.name, input: o.agent.input };
  const dev = findDevLink(url);
  if (dev !== null) return runThroughDev(o, url, agent, input, dev);
  const model: Model | undefined = o.provider === null ? undefined : await providerModel(o.provider);
  const definition =
    o.agent === undefined
      ? scenarioAgent(o.scenario, o.scenarioFile, model)
      : { ...o.agent.definition, ...definedProps({ model }) };
  sayIfNew(url);
  return withStore(url, async (store) => {
    const id = o.id ?? newTurnId();
    let worker;
    try {
      worker = createWorker({ store, agents: { [agent]: definition }, turnIds: [id] });
    } catch (error) {
      throw new UsageError(`Could not start the turn of ${o.scenarioFile}: ${oneLine(error)}`);
    }
    await submit(store, { agent, input, id, ...definedProps({ thread: o.thread }) });
    const where = o.thread === undefined ? '' : ` (thread ${o.thread})`;
    process.stdout.write(`${safeText(`stored turn ${id} in ${url}${where}`)}\n`);
    await worker.runUntilIdle();
    // Another worker of the store (on Postgres) may have claimed the turn first: wait for it.
    const turn = await untilSettled(store, id, url);
    process.stdout.write(`${turnLines(turn, url, o.scenarioFile).join('\n')}\n`);
    await sayIfBehind(store, turn, 'then run a worker');
    return exitFor(turn);
  });
}

/** The store is held by `turnkit dev`: the turn is submitted through it and run by its worker. */
async function runThroughDev(o: StoredRunOptions, url: string, agent: string, input: string, dev: DevLink): Promise<number> {
  if (o.provider !== null)
    throw new UsageError(
      `--provider cannot be used while turnkit dev (process ${dev.pid}) holds the store ${url}: its worker runs the turn with the model of its agents file.`,
    );
  if (!dev.agents.includes(agent))
    throw new UsageError(
      `turnkit dev (process ${dev.pid}) holds the store ${url} and runs the agents ${dev.agents.join(', ') || '(none)'}, not '${agent}': start it with --agents ${o.scenarioFile}.`,
    );
  return withClient(url, async (client) => {
    const id = await submit(client, {
      agent,
      input,
      ...definedProps({ id: o.id, thread: o.thread }),
    });
    const where = o.thread === undefined ? '' : `, thread ${o.thread}`;
    process.stdout.write(`${safeText(`stored turn ${id} in ${url} (run by turnkit dev, process ${dev.pid}${where})`)}\n`);
    const turn = await untilSettled(client, id, url);
    process.stdout.write(`${turnLines(turn, url, o.scenarioFile, dev).join('\n')}\n`);
    await sayIfBehind(client, turn, `turnkit dev (process ${dev.pid}) then runs this one`);
    return exitFor(turn);
  });
}

/** Says so when the turn waits behind an earlier turn of its thread. */
async function sayIfBehind(client: StoreClient, turn: StoredTurn, then: string): Promise<void> {
  const earlier = await waitsBehind(client, turn);
  if (earlier !== null && turn.thread !== null)
    process.stdout.write(
      `${safeText(`It waits behind turn ${earlier} of thread ${turn.thread}: decide that one (\`turnkit show --thread ${turn.thread}\`), ${then}.`)}\n`,
    );
}

async function submit(client: StoreClient, options: SubmitOptions): Promise<string> {
  try {
    return await client.submit(options);
  } catch (error) {
    // A bad or taken --id or --thread, a closed thread: the store's (or the server's) message names it.
    throw new UsageError(
      oneLine(error)
        .replace(/^store\.submit(: | option )/, '')
        .replace('`id`', '--id')
        .replace('`thread`', '--thread'),
    );
  }
}
