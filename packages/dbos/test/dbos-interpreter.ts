// Turns on DBOS as a conformance interpreter: a scenario's run becomes a turn submitted through the
// client API and run as a DBOS workflow in this process. Its options become an agent (model,
// system prompt, limits, output schema, and the tools with the permissions, hooks and policy the
// scenario's dispatcher was made with), registered under a name of its own; approvals go through
// `decide` (a DBOS message to the parked workflow), the scenario's abort signal becomes `cancel`.
// The result is read back with `get`, as any caller reads it.

import type { ApprovalDecision } from '@turnkit/core';
import type { AgentDefinition, StoredTurn } from '@turnkit/store';
import { storedStatusOf } from '@turnkit/store/internal';
import type { ConformanceResult } from '@turnkit/testing';
import type {
  AgentScenarioOptions,
  AgentScenarioResult,
  ConformanceResume,
  ConformanceResumeOptions,
  ConformanceRun,
  ResumeAgents,
  RunAgents,
} from '@turnkit/testing/internal';
import type { DbosTurnsClient } from '../src/index.js';
import {
  type AgentOptions,
  agentForRun,
  assertRanOnce,
  callerOf,
  decideStored,
  readTurn,
  resultOf,
  settleStored,
  treeAgents,
} from '../../store/test/stored-run.js';

/** How often the interpreter reads the turn while it waits for it to settle (ms). */
const POLL_MS = 15;

export interface DbosInterpreter {
  readonly run: ConformanceRun;
  readonly resume: ConformanceResume;
}

let turns = 0;

/** `agents` is the object the DBOS process was given: each run registers its agent in it. */
export function dbosInterpreter(client: DbosTurnsClient, agents: Record<string, AgentDefinition>): DbosInterpreter {
  /** Tool runs by call id, over the run and its resume: no call may run twice (no corpus tool is idempotent). */
  const runs = new Map<string, number>();

  async function settle(id: string, run: AgentOptions): Promise<ConformanceResult> {
    const turn = await settleStored(id, { client, drive: async () => void (await settled(client, id)), ...callerOf(run) });
    assertRanOnce(runs);
    return resultOf(turn, run.system);
  }

  return {
    async run(options) {
      if (options.transcript !== undefined && options.transcript.length > 0)
        throw new Error('a turn on DBOS cannot start from an earlier transcript');
      turns += 1;
      const id = `conformance-${turns}`;
      const { input, tools: _tools, id: _id, ...rest } = options;
      agents[id] = agentForRun(rest, runs, 'DBOS');
      await client.submit({ agent: id, id, input });
      return settle(id, rest);
    },
    async resume(options: ConformanceResumeOptions) {
      const { id, rest } = await decideStored(client, options);
      return settle(id, rest);
    },
  };
}

/** The turn once nothing more happens without a caller: it ended, or it (or its acting child) waits for decisions with none pending. */
async function settled(client: DbosTurnsClient, id: string): Promise<StoredTurn> {
  for (;;) {
    const turn = await readTurn(client, id);
    const ended = turn.status === 'stopped' || turn.status === 'failed' || turn.status === 'cancelled';
    const waiting =
      turn.status === 'awaiting_approval' &&
      turn.decisions.every((d) => d.status !== 'pending') &&
      turn.state !== null &&
      storedStatusOf(turn.state) === 'awaiting_approval';
    if (ended || waiting) return turn;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Turns of many agents on DBOS as an interpreter of the multi-agent conformance corpus. */
export interface DbosAgents {
  readonly run: RunAgents;
  readonly resume: ResumeAgents;
}

/**
 * The multi-agent corpus on DBOS: a scenario's tree becomes agents registered by name in `agents`
 * (the object the DBOS process was given; a scenario's agents replace the last one's, as the
 * corpus names its agents alike and a tree's agent path is made of their names), its input a
 * submitted turn that one workflow runs, tree and all. A child's parked call is decided through
 * `decide` and the turn read back with `get`, as the store's adapter does (store-agents.ts).
 */
export function dbosAgents(client: DbosTurnsClient, agents: Record<string, AgentDefinition>): DbosAgents {
  /** Tool runs by turn and call id: no call of any turn of the tree may run twice. */
  const runs = new Map<string, number>();

  async function settle(id: string, options: Omit<AgentScenarioOptions, 'input'>): Promise<AgentScenarioResult> {
    const turn = await settleStored(id, { client, drive: async () => void (await settled(client, id)), ...callerOf(options) });
    assertRanOnce(runs);
    return resultOf(turn, options.system);
  }

  return {
    async run(options) {
      turns += 1;
      const id = `agents-${turns}`;
      Object.assign(agents, treeAgents(options, runs));
      await client.submit({
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
      await client.decide(id, options.decisions as Record<string, ApprovalDecision>);
      return settle(id, options);
    },
  };
}
