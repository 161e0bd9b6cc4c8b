// The store as an interpreter of the multi-agent conformance corpus (docs/agents.md): a scenario's
// tree of agents becomes agents registered with the workers by name (`delegates`, `handoffs` and
// `models` as names), its input a submitted turn; workers run the whole tree inside the turn's row.
// A child's parked call is decided through `store.decide` and the turn read back with `store.get`.
// With `handBackAfter: k` the first worker hands the turn back after its k-th effect (as a worker
// past its drain deadline does), wherever in the tree that effect is, and a fresh worker goes on.

import type { ApprovalDecision } from '@turnkit/core';
import type { Store } from '@turnkit/store';
import type { AgentScenarioOptions, AgentScenarioResult, ResumeAgents, RunAgents } from '@turnkit/testing/internal';
import { assertRanOnce, callerOf, resultOf, settleStored, treeAgents } from './stored-run.js';
import { handingBack } from './store-interpreter.js';

export interface StoreAgents {
  readonly run: RunAgents;
  readonly resume: ResumeAgents;
  /** Whether a worker handed the turn back. */
  handedBack(): boolean;
}

let turns = 0;

export function storeAgents(store: Store, options: { readonly handBackAfter?: number } = {}): StoreAgents {
  const workers = handingBack(store, options.handBackAfter);
  /** Tool runs by turn and call id: no call of any turn of the tree may run twice. */
  const runs = new Map<string, number>();

  async function settle(id: string, options: Omit<AgentScenarioOptions, 'input'>): Promise<AgentScenarioResult> {
    const agents = treeAgents(options as AgentScenarioOptions, runs, workers.modelFor, {
      observe: () => ({ hooks: { onEffect: workers.onEffect } }),
    });
    const turn = await settleStored(id, { client: store, drive: () => workers.drain(id, agents), ...callerOf(options) });
    workers.assertNoFaults();
    assertRanOnce(runs);
    return resultOf(turn, options.system);
  }

  return {
    async run(options) {
      turns += 1;
      const id = `agents-${turns}`;
      await store.submit({
        agent: options.name,
        id,
        input: options.input,
        ...(options.limits === undefined ? {} : { limits: options.limits }),
      });
      return settle(id, options);
    },
    async resume(options) {
      const id = (options.state as { readonly id?: unknown } | null)?.id;
      if (typeof id !== 'string') throw new Error('the suspended state has no turn id');
      await store.decide(id, options.decisions as Record<string, ApprovalDecision>);
      return settle(id, options);
    },
    handedBack: workers.handedBack,
  };
}
