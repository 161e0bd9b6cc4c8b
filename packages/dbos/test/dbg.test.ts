import type { AgentDefinition } from '@turnkit/store';
import { runScenario, scenarios } from '@turnkit/testing';
import { it } from 'vitest';
import { createDbosTurns } from '../src/index.js';
import { dbosInterpreter } from './dbos-interpreter.js';
import { freshDatabase } from './postgres.js';
it('dbg', async () => {
  const agents: Record<string, AgentDefinition> = {};
  const turns = await createDbosTurns({ databaseUrl: await freshDatabase('dbg'), agents, cancelPollMs: 20, logLevel: 'info' });
  const s = scenarios.find((x) => x.name === 'approval: approve')!;
  const { run, resume } = dbosInterpreter(turns, agents);
  try {
    await runScenario(s, run, { resume });
  } finally {
    const t = await turns.get('conformance-1');
    console.log(JSON.stringify({ status: t?.status, st: t?.state?.status, decisions: t?.decisions, parked: t?.parked }));
    await turns.close();
  }
}, 60000);
