// The store as an interpreter of the multi-agent conformance corpus (docs/agents.md): a scenario's
// tree of agents becomes agents registered with the workers by name (`delegates`, `handoffs` and
// `models` as names), its input a submitted turn; workers run the whole tree inside the turn's row.
// A child's parked call is decided through `store.decide` and the turn read back with `store.get`.
// With `handBackAfter: k` the first worker hands the turn back after its k-th effect (as a worker
// past its drain deadline does), wherever in the tree that effect is, and a fresh worker goes on.

import type { ApprovalDecision } from '@turnkit/core';
import type { ToolDefinition } from '@turnkit/dispatch';
import type { AgentDefinition, Store } from '@turnkit/store';
import type {
  AgentScenarioOptions,
  AgentScenarioResult,
  ResumeAgents,
  RunAgents,
  ScenarioAgent,
} from '@turnkit/testing/internal';
import { assertRanOnce, callerOf, resultOf, settleStored } from './stored-run.js';
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

  // any: each tool has its own input type.
  const counted = (tool: ToolDefinition<any>): ToolDefinition<any> => ({
    ...tool,
    execute(input: unknown, ctx: { readonly callId: string; readonly turnId: string }) {
      const key = `${ctx.turnId} ${ctx.callId}`;
      runs.set(key, (runs.get(key) ?? 0) + 1);
      return tool.execute(input, ctx as Parameters<typeof tool.execute>[1]);
    },
  });

  /** The scenario's tree as registered agents, by name. */
  function agentsOf(root: AgentScenarioOptions): Record<string, AgentDefinition> {
    const out: Record<string, AgentDefinition> = {};
    const add = (agent: ScenarioAgent | AgentScenarioOptions, description: string | undefined, isRoot: boolean): void => {
      if (Object.hasOwn(out, agent.name)) return;
      out[agent.name] = {
        model: workers.modelFor(agent.model),
        tools: (agent.tools ?? []).map(counted),
        ...(agent.system === undefined ? {} : { system: agent.system }),
        ...(description === undefined ? {} : { description }),
        ...(agent.limits === undefined ? {} : { limits: agent.limits }),
        ...(agent.delegates === undefined ? {} : { delegates: agent.delegates.map((a) => a.name) }),
        ...(agent.handoffs === undefined ? {} : { handoffs: agent.handoffs.map((a) => a.name) }),
        ...(agent.models === undefined ? {} : { models: agent.models }),
        ...(isRoot ? { observe: () => ({ hooks: { onEffect: workers.onEffect } }) } : {}),
      };
      for (const next of [...(agent.delegates ?? []), ...(agent.handoffs ?? [])]) add(next, next.description, false);
    };
    add(root, undefined, true);
    return out;
  }

  async function settle(id: string, options: Omit<AgentScenarioOptions, 'input'>): Promise<AgentScenarioResult> {
    const agents = agentsOf(options as AgentScenarioOptions);
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
