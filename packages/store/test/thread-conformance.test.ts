// The thread corpus of @turnkit/testing, through stored turns on PGlite (in memory) and on a real
// Postgres: each turn is submitted with `thread`, run by a fresh worker (another process, as far
// as the turn can tell), decided through `store.decide`, and its thread read back with
// `store.get({ thread })`. Each must give the transcripts runTurn gives (inline's
// thread-conformance.test.ts runs the same corpus).

import type { ApprovalDecision, Message } from '@turnkit/core';
import type { DispatcherOptions } from '@turnkit/dispatch';
import { type AgentDefinition, createWorker, openStore, type Store } from '@turnkit/store';
import { type ConformanceResult, threadScenarios } from '@turnkit/testing';
import { type ConformanceThreads, runThreadScenario } from '@turnkit/testing/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropSchema, POSTGRES_URL, scratchSchema, WHY_SKIPPED } from './postgres.js';

let scenariosRun = 0;

/** Threads of stored turns: one agent per scenario run, its turns run by a new worker each time. */
function storeThreads(store: Store): ConformanceThreads {
  scenariosRun += 1;
  const agentName = `threads-${scenariosRun}`;
  return ({ thread, model, dispatcherOptions, system, compact, approve, limits }) => {
    const { tools = [], ...rest } = dispatcherOptions ?? ({ tools: [] } as DispatcherOptions);
    expect(Object.keys(rest)).toEqual([]); // an option the agent cannot carry would change the scenario
    const agent: AgentDefinition = {
      model,
      tools,
      ...(system === undefined ? {} : { system }),
      ...(compact === undefined ? {} : { compact }),
      ...(limits === undefined ? {} : { limits }),
    };
    const agents = { [agentName]: agent };
    const id = `${agentName}-${thread}`;
    return {
      async turn(input): Promise<ConformanceResult> {
        const turnId = await store.submit({ agent: agentName, input, thread: id });
        for (;;) {
          await createWorker({ store, agents }).runUntilIdle();
          const turn = await store.get(turnId);
          if (turn?.status !== 'awaiting_approval' || approve === undefined) break;
          const decisions = await approve(turn.parked, { turnId });
          await store.decide(turnId, decisions as Record<string, ApprovalDecision>);
        }
        const [turn, stored] = await Promise.all([store.get(turnId), store.get({ thread: id })]);
        if (turn === null || stored === null) throw new Error(`turn '${turnId}' or thread '${id}' is not in the store`);
        const transcript: Message[] =
          system === undefined ? [...stored.transcript] : [{ role: 'system', content: system }, ...stored.transcript];
        const last = transcript.findLast((m) => m.role === 'assistant');
        const outcome = turn.outcome;
        const base = { text: last?.role === 'assistant' ? last.content : '', state: turn.state, transcript };
        if (outcome?.status === 'stopped')
          return { ...base, status: 'stopped', output: outcome.output, stopReason: outcome.stopReason };
        if (outcome?.status === 'failed') return { ...base, status: 'failed', output: null, error: outcome.error };
        return { ...base, status: turn.status === 'cancelled' ? 'cancelled' : 'suspended', output: null };
      },
    };
  };
}

function threadConformance(name: string, open: () => Promise<Store>, cleanup?: () => Promise<void>): void {
  describe(`thread conformance: store (${name})`, () => {
    let store: Store;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store?.close();
      await cleanup?.();
    });
    it.each(threadScenarios.map((s) => [s.name, s] as const))('%s', (_name, scenario) =>
      runThreadScenario(scenario, storeThreads(store)),
    );
  });
}

threadConformance('PGlite', () => openStore('memory://'));

const schema = scratchSchema('threads');
describe.skipIf(POSTGRES_URL === undefined)(
  `on Postgres${POSTGRES_URL === undefined ? ` (skipped: ${WHY_SKIPPED})` : ''}`,
  () => {
    threadConformance(
      'Postgres',
      () => openStore(POSTGRES_URL as string, { schema }),
      () => dropSchema(schema),
    );
  },
);
