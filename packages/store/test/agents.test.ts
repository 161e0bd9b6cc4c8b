// The multi-agent conformance corpus through stored turns (PGlite in memory, in this process): the
// whole tree runs in its turn's row, a child's parked call is decided with `store.decide`, and the
// corpus runs again with the turn handed to a fresh worker after every effect of the tree.

import { errorMessage } from '@turnkit/core/internal';
import { openStore, type Store } from '@turnkit/store';
import { agentScenarios, runAgentScenario } from '@turnkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeAgents } from './store-agents.js';

let store: Store;
beforeAll(async () => {
  store = await openStore('memory://');
});
afterAll(async () => {
  await store?.close();
});

const corpus = agentScenarios.map((s) => [s.name, s] as const);

describe('multi-agent conformance: store (PGlite)', () => {
  it.each(corpus)('%s', async (_name, scenario) => {
    const { run, resume } = storeAgents(store);
    await runAgentScenario(scenario, run, resume);
  });
});
