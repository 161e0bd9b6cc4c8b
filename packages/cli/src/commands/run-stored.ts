// `turnkit run <scenario> --store [url]`: the scenario's turn is stored. It is submitted for the
// agent named after the file and run by a worker in this process (only this turn); when it parks,
// the commands that decide it and the worker that continues it (`--agents <scenario>`) are printed.

import { createWorker, newTurnId } from '@turnkit/store';
import type { Model } from '@turnkit/core';
import { oneLine, UsageError } from '../errors.js';
import { providerModel, type ProviderOptions } from '../provider.js';
import type { LoadedScenarioFile } from '../scenario.js';
import { safeText } from '../safe-text.js';
import { agentName, scenarioAgent } from './agents-file.js';
import { DEFAULT_STORE, exitFor, turnLines, withStore } from './store-common.js';

export interface StoredRunOptions {
  readonly scenarioFile: string;
  readonly scenario: LoadedScenarioFile;
  readonly provider: ProviderOptions | null;
  /** `--store` as given: true for the flag alone. */
  readonly store: string | true;
  /** `--id`: the stored turn's id. */
  readonly id?: string;
  /** Flags that have no meaning for a stored turn, by name, when given. */
  readonly unsupported: readonly string[];
}

export async function runStoredCommand(o: StoredRunOptions): Promise<number> {
  if (o.unsupported.length > 0)
    throw new UsageError(
      `${o.unsupported.join(', ')} cannot be used with --store: a stored turn is read back with \`turnkit show <turn>\`.`,
    );
  const url = o.store === true ? DEFAULT_STORE : o.store;
  const model: Model | undefined = o.provider === null ? undefined : await providerModel(o.provider);
  const agent = agentName(o.scenarioFile);
  const definition = scenarioAgent(o.scenario, o.scenarioFile, model);
  return withStore(url, async (store) => {
    const id = o.id ?? newTurnId();
    let worker;
    try {
      worker = createWorker({ store, agents: { [agent]: definition }, turnIds: [id] });
    } catch (error) {
      throw new UsageError(`Could not start the turn of ${o.scenarioFile}: ${oneLine(error)}`);
    }
    try {
      await store.submit({ agent, input: o.scenario.input, id });
    } catch (error) {
      // A bad or taken --id: the store's message names it.
      throw new UsageError(
        oneLine(error)
          .replace(/^store\.submit(: | option )/, '')
          .replace('`id`', '--id'),
      );
    }
    process.stdout.write(`${safeText(`stored turn ${id} in ${url}`)}\n`);
    await worker.runUntilIdle();
    const turn = await store.get(id);
    if (turn === null) throw new Error(`turn ${id} vanished from the store ${url}`);
    process.stdout.write(`${turnLines(turn, url, o.scenarioFile).join('\n')}\n`);
    return exitFor(turn);
  });
}
