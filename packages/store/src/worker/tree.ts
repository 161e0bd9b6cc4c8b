// A stored turn of many agents (docs/agents.md, "The durable store"). The whole tree lives in its
// root turn's row: core keeps the child turn inside the parent's state, so one fenced row and one
// lease hold the tree and no write spans two rows. What the row does not hold is kept by key:
// - a child's tool calls and decisions are journaled and stored under a key made of the
//   `transfer_task` call path and the call's own id, joined by U+001F (a control character no call
//   id may contain: docs/turn-contract.md, "Call identity"), so a child's `call_1` is never its
//   parent's `call_1`;
// - a child's messages, notices, compactions, remembered grants and its agents' dispatcher budget
//   counts are log entries of kind
//   `child` (`ChildLogEntry`), which the turn's own transcript, its thread's context and its claim
//   never read: they are the child's;
// - the dispatcher budget counts of an agent the root turn handed off to are `child` entries too,
//   whose `turn` is the root turn's own id (the root agent's are in the row): no child turn.
// Which turn of the tree acts, and where it is, is core's answer (`activeTurn`).

import type { Message, TurnState } from '@turnkit/core';
import { activeTurn, layerLimits } from '@turnkit/core/internal';
import { agentTools, type Dispatcher, type Grant } from '@turnkit/dispatch';
import type { AgentTarget, BudgetUsage } from '@turnkit/dispatch/internal';
import type { HandlerContext } from '@turnkit/inline/driver';
import type { ChildLogEntry } from '../types.js';
import type { AgentDefinition } from './types.js';

/** Joins a call path and a call id into a journal or inbox key (U+001F cannot occur in an id). */
const SEP = '\u001f';

/** The key a call of the turn at `callPath` (the `transfer_task` calls above it) is journaled and decided under. */
export function callKey(callPath: readonly string[], callId: string): string {
  return callPath.length === 0 ? callId : [...callPath, callId].join(SEP);
}

/** A key split back into the call path and the call's own id. */
export function splitKey(key: string): { readonly callPath: readonly string[]; readonly callId: string } {
  const parts = key.split(SEP);
  const callId = parts.pop() as string;
  return { callPath: parts, callId };
}

/** The id of the child turn at `callPath` under turn `rootId`, as core names it (`<parent id>/<call id>`). */
export function childTurnId(rootId: string, callPath: readonly string[]): string {
  return [rootId, ...callPath].join('/');
}

/** The keys of the calls of the turn of the tree that acts now (core's `activeTurn`). */
export function activeKeys(root: TurnState): { readonly callPath: readonly string[]; key(callId: string): string } {
  const { callPath } = activeTurn(root);
  return { callPath, key: (callId) => callKey(callPath, callId) };
}

/** An agent definition's names of `delegates` or `handoffs`, checked (a list of registered agents' names). */
function names(agent: AgentDefinition, option: 'delegates' | 'handoffs', name: string): readonly string[] {
  const list = agent[option];
  if (list === undefined) return [];
  if (!Array.isArray(list) || list.some((n) => typeof n !== 'string' || n === ''))
    throw new TypeError(`agent '${name}' option \`${option}\` must be an array of the names of registered agents.`);
  return list;
}

/** True when the agent may delegate, hand off or change model (its turns are trees). */
export function isMultiAgent(agent: AgentDefinition): boolean {
  return agent.delegates !== undefined || agent.handoffs !== undefined || agent.models !== undefined;
}

/**
 * The agents a turn of `root` may reach through `delegates` and `handoffs`, by name, each checked
 * to be registered with a description. `host` names what runs the turn and where agents are
 * registered with it, for the error (the store's worker by default; the DBOS adapter's process).
 */
export function reachable(
  root: string,
  agents: { readonly [name: string]: AgentDefinition },
  host: { readonly name: string; readonly register: string } = { name: 'this worker', register: 'createWorker({ agents })' },
): Map<string, AgentDefinition> {
  const found = new Map<string, AgentDefinition>();
  const visit = (name: string, from: string | null): void => {
    if (found.has(name)) return;
    if (!Object.hasOwn(agents, name))
      throw new TypeError(
        `agent '${from}' names the agent '${name}', which is not registered with ${host.name}; register it in ${host.register}.`,
      );
    const agent = agents[name] as AgentDefinition;
    if (from !== null && (typeof agent.description !== 'string' || agent.description === ''))
      throw new TypeError(`agent '${name}' (reached from '${from}') needs a \`description\`: the model reads it to choose.`);
    found.set(name, agent);
    for (const option of ['delegates', 'handoffs'] as const) for (const next of names(agent, option, name)) visit(next, name);
  };
  visit(root, null);
  return found;
}

/** An agent's own limits, with its tools' loop exemptions, as a child turn or a handoff takes them. */
function ownLimits(agent: AgentDefinition) {
  return layerLimits(
    [agent.limits],
    (agent.tools ?? []).filter((t) => t.loopExempt).map((t) => t.name),
  );
}

function target(name: string, agent: AgentDefinition): AgentTarget {
  const limits = ownLimits(agent);
  return {
    name,
    description: agent.description ?? '',
    ...(agent.system === undefined ? {} : { system: agent.system }),
    ...(limits === undefined ? {} : { limits }),
  };
}

/** The runtime tools (`transfer_task`, `handoff`, `change_model`) an agent's delegates, handoffs and models call for. */
export function runtimeTools(name: string, agents: ReadonlyMap<string, AgentDefinition>): ReturnType<typeof agentTools> {
  const agent = agents.get(name) as AgentDefinition;
  const pick = (option: 'delegates' | 'handoffs'): AgentTarget[] =>
    names(agent, option, name).map((n) => target(n, agents.get(n) as AgentDefinition));
  const models = agent.models ?? [];
  if (!Array.isArray(models) || models.some((m) => typeof m !== 'string' || m === ''))
    throw new TypeError(`agent '${name}' option \`models\` must be an array of model ids (non-empty strings).`);
  return agentTools({ delegates: pick('delegates'), handoffs: pick('handoffs'), models });
}

/** The driver's directory of a tree's agents (what inline's `childContext` and `contextFor` look agents up in). */
export type AgentDirectory = NonNullable<HandlerContext['agents']>;

/**
 * The directory the driver performs a tree's effects with: each agent's model, system prompt,
 * checks and compaction, and `dispatcher` (made by `makeDispatcher`, which journals its tools),
 * and its limits (core's own limits for a child turn come from the `transfer_task` call).
 */
export function directory(
  agents: ReadonlyMap<string, AgentDefinition>,
  makeDispatcher: (name: string) => Dispatcher,
): AgentDirectory {
  const out = new Map();
  for (const [name, agent] of agents) {
    out.set(name, {
      options: {
        model: agent.model,
        ...(agent.system === undefined ? {} : { system: agent.system }),
        ...(agent.output === undefined ? {} : { output: agent.output }),
        ...(agent.check === undefined ? {} : { check: agent.check }),
        ...(agent.compact === undefined ? {} : { compact: agent.compact }),
      },
      dispatcher: () => makeDispatcher(name),
      limits: {},
    });
  }
  return out as AgentDirectory;
}

/** What a dispatcher of a stored turn starts from: the grants it holds and the budget counts it has (null: none yet). */
export interface SavedDispatcher {
  readonly grants: readonly Grant[];
  readonly budgetUsage: BudgetUsage | null;
}

/**
 * What the dispatchers of a running child turn start from in a new activation, as the child wrote
 * it: the grants it remembered (shared by its agents), and each agent's budget counts by name. For
 * the root turn (by its own id): the budget counts of the agents it handed off to (its grants are
 * the row's, never here).
 */
export interface ChildDispatchState {
  readonly grants: readonly Grant[];
  readonly budgetUsage: ReadonlyMap<string, BudgetUsage>;
}

/**
 * The transcripts and dispatcher states (grants, budget counts) of the child turns on the path to
 * the acting turn, rebuilt from the `child` log entries (each message appended, a compaction
 * replacing what came before, the latest grants, each agent's latest counts), each transcript led
 * by its agent's system prompt (code: never stored); and under the root turn's own id, the latest
 * counts of each agent the root handed off to (entries whose `turn` is the root's).
 */
export function childParts(
  entries: readonly ChildLogEntry[],
  root: TurnState,
  agents: ReadonlyMap<string, AgentDefinition>,
): { transcripts: Record<string, Message[]>; dispatchers: Map<string, ChildDispatchState> } {
  const transcripts: Record<string, Message[]> = {};
  const dispatchers = new Map<string, { grants: readonly Grant[]; budgetUsage: Map<string, BudgetUsage> }>();
  // The child turns running now, by id, with the agent each started with.
  const running = new Map<string, string>();
  let state = root;
  while (state.status === 'delegating' && state.agents?.child != null) {
    const first = state.agents.delegations[0];
    if (first === undefined) break;
    running.set(state.agents.child.id, first.agent);
    state = state.agents.child;
  }
  for (const [id, agent] of running) {
    const system = agents.get(agent)?.system;
    transcripts[id] = system === undefined ? [] : [{ role: 'system', content: system }];
    dispatchers.set(id, { grants: [], budgetUsage: new Map() });
  }
  dispatchers.set(root.id, { grants: [], budgetUsage: new Map() });
  for (const entry of entries) {
    const saved = dispatchers.get(entry.turn);
    if (saved === undefined) continue; // a child turn that has ended
    if (entry.budgetUsage !== undefined) {
      saved.budgetUsage.set(entry.agentPath.at(-1) ?? '', entry.budgetUsage);
      continue;
    }
    const transcript = transcripts[entry.turn];
    if (transcript === undefined) continue; // the root turn's own entries are only its handoff agents' counts
    if (entry.message !== undefined) transcript.push(entry.message);
    else if (entry.compaction !== undefined) {
      const lead = transcript[0]?.role === 'system' && entry.compaction[0]?.role !== 'system' ? [transcript[0]] : [];
      transcripts[entry.turn] = [...lead, ...entry.compaction];
    } else if (entry.grants !== undefined) saved.grants = entry.grants;
  }
  return { transcripts, dispatchers };
}
