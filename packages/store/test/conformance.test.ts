// The store contract, on PGlite in memory and (when TURNKIT_TEST_POSTGRES_URL is set) on a real
// Postgres, in a scratch schema dropped afterwards.
import { createWorker, openStore, type Store } from '@turnkit/store';
import { agentScenarios } from '@turnkit/testing';
import { runAgentScenario } from '@turnkit/testing/internal';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { storeAgents } from './store-agents.js';
import { storeConformance } from '@turnkit/testing/store-conformance';
import { dropSchema, POSTGRES_URL, scratchSchema, WHY_SKIPPED } from './postgres.js';

storeConformance(() => openStore('memory://'), { name: 'PGlite (memory://)', createWorker });

const schema = scratchSchema('conformance');
storeConformance(() => openStore(POSTGRES_URL ?? '', { schema }), {
  name: 'Postgres',
  createWorker,
  skip: POSTGRES_URL === undefined ? WHY_SKIPPED : false,
  cleanup: () => dropSchema(schema),
});

// The multi-agent corpus on Postgres (agents.test.ts runs it on PGlite, and with hand-backs).
describe.skipIf(POSTGRES_URL === undefined)('multi-agent conformance: store (Postgres)', () => {
  const agentsSchema = scratchSchema('agents');
  let store: Store;
  beforeAll(async () => {
    store = await openStore(POSTGRES_URL ?? '', { schema: agentsSchema });
  });
  afterAll(async () => {
    await store?.close();
    await dropSchema(agentsSchema);
  });
  it.each(agentScenarios.map((s) => [s.name, s] as const))('%s', async (_name, scenario) => {
    const { run, resume } = storeAgents(store);
    await runAgentScenario(scenario, run, resume);
  });
});
