// The interpreter conformance corpus of @turnkit/testing through DBOS workflows on a real Postgres:
// each scenario is submitted through the client API, run as a DBOS workflow, decided through
// `decide` and read back with `get`, and must give the transcript and outcome every interpreter
// gives (see dbos-interpreter.ts). The thread corpus runs in the same DBOS process (one per
// process): each turn submitted with `thread`, decided through `decide`, and its thread read back
// with `get({ thread })`, with the transcripts runTurn and the store give. The multi-agent corpus
// runs there too: a tree of agents is one workflow (dbos-interpreter.ts, `dbosAgents`).

import type { ApprovalDecision } from '@turnkit/core';
import type { DispatcherOptions } from '@turnkit/dispatch';
import type { AgentDefinition, StoredTurn } from '@turnkit/store';
import { agentScenarios, scenarios, threadScenarios } from '@turnkit/testing';
import { type ConformanceThreads, runAgentScenario, runScenario, runThreadScenario } from '@turnkit/testing/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDbosTurns, type DbosTurnsClient } from '../src/index.js';
import { resultOf } from '../../store/test/stored-run.js';
import { dbosAgents, dbosInterpreter } from './dbos-interpreter.js';
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

    it.each(threadScenarios.map((s) => [s.name, s] as const))('%s', (_name, scenario) =>
      runThreadScenario(scenario, dbosThreads(turns, agents)),
    );

    // The multi-agent corpus: each tree one workflow, its children's model and tool calls DBOS steps.
    it.each(agentScenarios.map((s) => [s.name, s] as const))('agents: %s', async (_name, scenario) => {
      const { run, resume } = dbosAgents(turns, agents);
      await runAgentScenario(scenario, run, resume);
    });
  },
);

let threadRuns = 0;

/** Threads of turns on DBOS: one agent per scenario run, registered in the process's `agents`. */
function dbosThreads(turns: DbosTurnsClient, agents: Record<string, AgentDefinition>): ConformanceThreads {
  threadRuns += 1;
  const agentName = `threads-${threadRuns}`;
  return ({ thread, model, dispatcherOptions, system, compact, approve, limits }) => {
    const { tools = [], ...rest } = dispatcherOptions ?? ({ tools: [] } as DispatcherOptions);
    expect(Object.keys(rest)).toEqual([]); // an option the agent cannot carry would change the scenario
    agents[agentName] = {
      model,
      tools,
      ...(system === undefined ? {} : { system }),
      ...(compact === undefined ? {} : { compact }),
      ...(limits === undefined ? {} : { limits }),
    };
    const id = `${agentName}-${thread}`;
    return {
      async turn(input) {
        const turnId = await turns.submit({ agent: agentName, input, thread: id });
        let turn = await settled(turns, turnId);
        while (turn.status === 'awaiting_approval' && approve !== undefined) {
          await turns.decide(turnId, (await approve(turn.parked, { turnId })) as Record<string, ApprovalDecision>);
          turn = await settled(turns, turnId);
        }
        const stored = await turns.get({ thread: id });
        if (stored === null) throw new Error(`thread '${id}' is not there`);
        // The thread's transcript after the turn, read as any turn's result is (the store's reader).
        return resultOf({ ...turn, transcript: stored.transcript }, system);
      },
    };
  };
}

/** The turn once it ended, or parked with no decision pending (watch follows it: no timed polling here). */
async function settled(turns: DbosTurnsClient, id: string): Promise<StoredTurn> {
  let after = 0;
  for (;;) {
    for await (const event of turns.watch(id, { pollMs: 15, after })) {
      after = event.seq;
      if (event.type === 'status' && event.status === 'awaiting_approval') break;
    }
    const turn = await turns.get(id);
    if (turn === null) throw new Error(`turn '${id}' is not there`);
    if (turn.endedAt !== null) return turn;
    if (turn.state?.status === 'awaiting_approval' && turn.decisions.every((d) => d.status !== 'pending')) return turn;
  }
}
