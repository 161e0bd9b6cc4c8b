// The interpreter conformance corpus of @turnkit/testing through DBOS workflows on a real Postgres:
// each scenario is submitted through the client API, run as a DBOS workflow, decided through
// `decide` and read back with `get`, and must give the transcript and outcome every interpreter
// gives (see dbos-interpreter.ts).

import type { AgentDefinition } from '@turnkit/store';
import { runScenario, scenarios } from '@turnkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDbosTurns, type DbosTurnsClient } from '../src/index.js';
import { dbosInterpreter } from './dbos-interpreter.js';
import { dropDatabase, freshDatabase, POSTGRES_URL, WHY_SKIPPED } from './postgres.js';

/** Scenarios a turn on DBOS cannot run, and why (the store's reasons: the same client API). */
const skipped: Readonly<Record<string, string>> = {
  'system prompt and earlier transcript': 'submit takes an input only: a turn cannot start from an earlier transcript',
  'approval: expire':
    "no approve callback is asked (a call left out stays parked and the turn is reported suspended); a durable approval's expiry is its deadline (approvalTimeoutMs), tested in dbos.test.ts",
  'cancel during a model call':
    "the script throws the model call's AbortError at once, as if the interpreter's own signal had aborted it; a turn on DBOS hears a cancel through its inbox (the model call's step looks for one every cancelPollMs), so the model's error fails the turn first",
};

const runnable = scenarios.filter((s) => !Object.hasOwn(skipped, s.name)).map((s) => [s.name, s] as const);

it('skips only scenarios that exist, and runs the rest', () => {
  const names = scenarios.map((s) => s.name);
  for (const name of Object.keys(skipped)) expect(names).toContain(name);
  expect(runnable).toHaveLength(scenarios.length - Object.keys(skipped).length);
});

describe.skipIf(POSTGRES_URL === undefined)(
  `interpreter conformance: DBOS workflows${POSTGRES_URL === undefined ? ` (skipped: ${WHY_SKIPPED})` : ''}`,
  () => {
    const agents: Record<string, AgentDefinition> = {};
    let turns: DbosTurnsClient;
    let databaseUrl: string | undefined;
    beforeAll(async () => {
      databaseUrl = await freshDatabase('conformance');
      turns = await createDbosTurns({ databaseUrl, agents, cancelPollMs: 20 });
    }, 60_000);
    afterAll(async () => {
      await turns?.close();
      await dropDatabase(databaseUrl);
    });

    it.each(runnable)('%s', async (_name, scenario) => {
      const { run, resume } = dbosInterpreter(turns, agents);
      await runScenario(scenario, run, { resume });
    });
  },
);
