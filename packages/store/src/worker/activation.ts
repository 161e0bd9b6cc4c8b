// Running one claimed turn in a worker: find its agent, build the dispatcher over journaling tools,
// read (or create) its state, ask core's `resume` where it goes on, and drive it with inline's driver
// until it ends, parks or its lease is lost. Every turn decision is core's `step`.

import { createTurn, isTerminal, parseTurnState, resume, type ToolResult, type TurnError, type TurnState } from '@turnkit/core';
import { activeTurn, definedProps, layerLimits } from '@turnkit/core/internal';
import { createDispatcher, type Dispatcher, type DispatcherOptions, type ToolDefinition } from '@turnkit/dispatch';
import { driveTurn } from '@turnkit/inline/driver';
import { crashPoint } from '../crash.js';
import { isFencedOut, messageOf } from '../errors.js';
import { storedStatusOf, TERMINAL } from '../statuses.js';
import { Fence, type Report } from './fence.js';
import { HeldTurn } from './held-turn.js';
import { type ActivationObserver, type ActivationStatus, startObserver } from './observe.js';
import type { Departure } from './protocol.js';
import { journalingTools, type KeyOf } from './tool-journal.js';
import {
  callKey,
  type ChildDispatchState,
  childParts,
  type SavedDispatcher,
  directory,
  isMultiAgent,
  reachable,
  runtimeTools,
} from './tree.js';
import type { Claim } from '../types.js';
import type { AgentDefinition, Leases, WorkerOptions } from './types.js';

/** A turn of many agents as prepared: its agents, its running children's dispatcher states as stored (filled in by `drive`), and each agent's dispatcher maker. */
interface PreparedTree {
  readonly agents: ReadonlyMap<string, AgentDefinition>;
  readonly children: Map<string, ChildDispatchState>;
  readonly make: (name: string, saved: SavedDispatcher) => Dispatcher;
}

type Prepared =
  | { readonly run: HeldTurn; readonly state: TurnState; readonly tree: PreparedTree | null }
  | { readonly error: TurnError };

/** Why the store fails a turn before it runs (unknown agent, bad agent, unreadable state, bad limits). */
class TurnFailure extends Error {
  constructor(readonly error: TurnError) {
    super(error.message);
  }
}

function findAgent(claim: Claim, agents: WorkerOptions['agents']): AgentDefinition {
  if (Object.hasOwn(agents, claim.agent)) return agents[claim.agent] as AgentDefinition;
  const known =
    Object.keys(agents)
      .map((a) => `'${a}'`)
      .join(', ') || '(none)';
  throw new TurnFailure({
    kind: 'unknown_agent',
    message: `No agent '${claim.agent}' is registered with the worker that took this turn (it has ${known}). Register the agent with createWorker({ agents }) and submit the turn again.`,
  });
}

/**
 * What a stored agent's dispatcher is made from beside its tools, grants and budget counts: its
 * policy, permission rules, hooks, budget and approval deadline (the worker's and the DBOS
 * workflow's dispatchers both).
 */
export function dispatcherRules(
  agent: AgentDefinition,
): Pick<DispatcherOptions, 'policy' | 'permissions' | 'hooks' | 'budget' | 'approvalTimeoutMs'> {
  return {
    ...definedProps({ policy: agent.policy }),
    ...definedProps({ permissions: agent.permissions }),
    ...definedProps({ hooks: agent.hooks }),
    ...definedProps({ budget: agent.budget }),
    ...definedProps({ approvalTimeoutMs: agent.approvalTimeoutMs }),
  };
}

function makeDispatcher(
  claim: Claim,
  agent: AgentDefinition,
  fence: Fence,
  observer: ActivationObserver | null,
  // any: each tool has its own input type.
  runtime: readonly ToolDefinition<any>[] = [],
  keyOf?: KeyOf,
  // The root agent's are the turn's row's; a child turn's agent's are its log entries' (tree.ts).
  saved: SavedDispatcher = claim,
): Dispatcher {
  try {
    return createDispatcher({
      // The runtime tools (transfer_task, handoff, change_model) change nothing outside the turn: not journaled.
      tools: [...journalingTools(agent.tools ?? [], fence, keyOf), ...runtime],
      ...definedProps({ wrapExecution: observer?.hooks?.wrapExecution }),
      ...dispatcherRules(agent),
      grants: saved.grants,
      ...(saved.budgetUsage === null ? {} : { budgetUsage: saved.budgetUsage }),
    });
  } catch (error) {
    throw new TurnFailure({ kind: 'invalid_agent', message: `Agent '${claim.agent}' cannot run this turn: ${messageOf(error)}` });
  }
}

/** The stored state, or a new one with the agent's limits merged under the turn's. */
function initialState(claim: Claim, agent: AgentDefinition, dispatcher: Dispatcher): TurnState {
  const id = claim.lease.id;
  if (claim.state !== null) {
    try {
      return parseTurnState(claim.state);
    } catch (error) {
      throw new TurnFailure({
        kind: 'corrupt_state',
        message: `The stored state of turn '${id}' cannot be read (${messageOf(error)}); it is kept as it was for inspection.`,
      });
    }
  }
  // The turn's own limits over the agent's, and the dispatcher's loop-exempt tools, as runTurn joins them.
  const limits = layerLimits([agent.limits, claim.limits], dispatcher.loopExemptTools());
  // A turn of an agent that may delegate, hand off or change model names its agent (the root of the agent path).
  const named = isMultiAgent(agent) ? { agent: claim.agent } : {};
  try {
    return createTurn(limits === undefined ? { id, ...named } : { id, limits, ...named });
  } catch (error) {
    throw new TurnFailure({
      kind: 'invalid_limits',
      message: `The limits of agent '${claim.agent}' and this turn do not combine: ${messageOf(error)}`,
    });
  }
}

/** The agent's observer for this activation (null without `observe`, or when it threw: reported). */
function observe(claim: Claim, agent: AgentDefinition, report: Report): ActivationObserver | null {
  const activation = {
    turnId: claim.lease.id,
    agent: claim.agent,
    traceContext: claim.traceContext,
    transcript: claim.transcript,
  };
  return startObserver(agent.observe, activation, (error) => report(error, claim.lease.id));
}

/** The agents a turn of many agents reaches, checked (a TurnFailure names what is wrong). */
function treeAgents(claim: Claim, agents: WorkerOptions['agents']): Map<string, AgentDefinition> {
  try {
    const reached = reachable(claim.agent, agents);
    // Each agent's runtime tools are made now, so a bad `models` fails the turn before it starts, naming the agent.
    for (const name of reached.keys()) runtimeTools(name, reached);
    return reached;
  } catch (error) {
    throw new TurnFailure({ kind: 'invalid_agent', message: `Agent '${claim.agent}' cannot run this turn: ${messageOf(error)}` });
  }
}

function prepare(claim: Claim, agents: WorkerOptions['agents'], fence: Fence): Prepared {
  try {
    const agent = findAgent(claim, agents);
    const observer = observe(claim, agent, fence.report);
    if (!isMultiAgent(agent)) {
      const dispatcher = makeDispatcher(claim, agent, fence, observer);
      const state = initialState(claim, agent, dispatcher);
      return {
        run: new HeldTurn(fence, agent, dispatcher, observer, claim.traceContext, claim.now, claim.thread ?? null),
        state,
        tree: null,
      };
    }
    // A turn of many agents: every agent's tools journal under the acting turn's keys (tree.ts).
    const reached = treeAgents(claim, agents);
    let held: HeldTurn | null = null;
    const keyOf: KeyOf = (callId) => (held === null ? callId : held.keyOf(callId));
    const make = (name: string, saved: SavedDispatcher): Dispatcher => {
      const definition = reached.get(name) as AgentDefinition;
      const runtime = runtimeTools(name, reached);
      // The root agent's observer wraps every agent's tools (its tracer puts a child's tool under the child's span), as runTurn's wrapExecution does.
      return makeDispatcher(claim, definition, fence, observer, runtime, keyOf, saved);
    };
    const dispatcher = makeDispatcher(claim, agent, fence, observer, runtimeTools(claim.agent, reached), keyOf);
    const state = initialState(claim, agent, dispatcher);
    held = new HeldTurn(fence, agent, dispatcher, observer, claim.traceContext, claim.now, claim.thread ?? null, claim.agent);
    return { run: held, state, tree: { agents: reached, children: new Map(), make } };
  } catch (error) {
    if (error instanceof TurnFailure) return { error: error.error };
    throw error;
  }
}

/**
 * Gives a held turn of many agents its tree: the directory, and its running children's transcripts
 * and dispatcher states as stored, with the budget counts of the agents its root handed off to. A
 * tree that has run before (`stored`) reads its `child` log entries for them; a new one has none.
 */
async function useTree(run: HeldTurn, tree: PreparedTree, state: TurnState, start: TurnState, stored: boolean): Promise<void> {
  const { store, lease } = run.fence;
  const entries = stored ? await run.fence.write(() => store.childLog(lease)) : [];
  const parts = childParts(entries, state, tree.agents);
  for (const [turn, saved] of parts.dispatchers) tree.children.set(turn, saved);
  const idempotent = new Map(
    [...tree.agents].map(([name, a]) => [name, new Set((a.tools ?? []).filter((t) => t.idempotent).map((t) => t.name))] as const),
  );
  const dir = directory(tree.agents, (name) =>
    run.dispatcherFor(name, (saved) => tree.make(name, saved), tree.children, run.dispatcher.grants()),
  );
  run.useTree({ directory: dir, childTranscripts: parts.transcripts, idempotent }, start);
}

/**
 * The journal's results for the batch in flight (its calls, or the approved ones), as `resume`'s
 * `completed`: in a tree, the batch of the turn that acts (core's `activeTurn`), keyed as tree.ts keys it.
 */
async function journaled(run: HeldTurn, state: TurnState): Promise<{ completed?: ToolResult[] }> {
  const { state: acting, callPath } = activeTurn(state);
  const calls = acting.batch?.calls ?? [];
  if (calls.length === 0) return {};
  const { store, lease } = run.fence;
  const byKey = new Map(calls.map((c) => [callKey(callPath, c.id), c.id]));
  const { results } = await run.fence.write(() => store.journal(lease, [...byKey.keys()]));
  return { completed: results.map((r) => ({ ...r, callId: byKey.get(r.callId) ?? r.callId })) };
}

async function drive(run: HeldTurn, claim: Claim, state: TurnState, tree: PreparedTree | null): Promise<void> {
  const { store, lease } = run.fence;
  const cancelled = isTerminal(state) ? null : run.takeCancel(await store.pendingInbox(lease));
  // Core says where the stored state goes on: a waiting cancel first, a ready turn started, the
  // batch in flight issued again for the journal to answer, a retry's wait already spent in the
  // database (the turn was not claimable until it was due).
  const [start, effects] = resume(state, {
    durable: true,
    retryWaited: true,
    ...definedProps({ cancel: cancelled ?? undefined, input: claim.input ?? undefined }),
    // A cancel closes the batch in flight: the results its journal holds are kept.
    ...(cancelled === null ? {} : await journaled(run, state)),
  });
  if (tree !== null) await useTree(run, tree, state, start, claim.state !== null);
  const { state: end, outcome } = await driveTurn(start, effects, run.context(claim.transcript), run.handlers());
  // A tree whose child waits for a decision is parked too (its row says `awaiting_approval`).
  if (outcome === null && storedStatusOf(end) !== 'awaiting_approval') {
    const message = `The worker found nothing to do for a turn in status '${end.status}'.`;
    run.letGo();
    await store.commit(lease, { fail: { kind: 'internal_error', message }, release: true });
    return;
  }
  await run.write(end, true);
}

/** Runs one claimed turn until it ends, parks, waits for a retry, or leaves this worker. */
export async function runActivation(
  store: Leases,
  claim: Claim,
  agents: WorkerOptions['agents'],
  leaseMs: number,
  report: Report,
  fence: Fence = new Fence(store, claim.lease, report),
): Promise<Departure> {
  crashPoint('claimed');
  const prepared = prepare(claim, agents, fence);
  if ('error' in prepared) {
    await store.commit(claim.lease, { fail: prepared.error, release: true });
    return 'finished';
  }
  const stopRenewal = prepared.run.keepLease(leaseMs);
  let departure: Departure = 'lost';
  try {
    try {
      await drive(prepared.run, claim, prepared.state, prepared.tree);
    } catch (error) {
      if (fence.hold.lost === null && !isFencedOut(error)) throw error;
    } finally {
      stopRenewal();
      fence.cancellation.abort('the turn has left this worker');
    }
    departure = await depart(prepared.run, fence);
    return departure;
  } finally {
    prepared.run.endActivation(activationStatus(departure, fence.lease.status));
  }
}

/** What an activation's observer is told when the turn leaves this worker. */
function activationStatus(departure: Departure, status: string): ActivationStatus {
  if (departure === 'retry') return 'waiting_retry';
  if (departure === 'handed_back' || departure === 'lost') return departure;
  if (departure === 'parked') return 'suspended';
  return status === 'stopped' || status === 'cancelled' ? status : 'failed';
}

/** After the drive: the protocol says how the turn leaves (a parked retry is written, a handed-back or faulted turn released). */
async function depart(run: HeldTurn, fence: Fence): Promise<Departure> {
  const { store, lease, lost, report } = fence;
  let how: Departure = 'lost';
  for (const effect of fence.decide({ type: 'drive_ended', terminal: TERMINAL.has(lease.status) })) {
    if (effect.type === 'park_retry') await run.parkRetry(effect);
    // Ends the lease now, so another worker need not wait for it to expire (the database may still be down: then it expires).
    else if (effect.type === 'release') await store.release(fence.fencedLease(effect.token)).catch(() => undefined);
    else if (effect.type === 'depart') how = effect.how;
  }
  if (how === 'lost' && lost !== null) report(lost, lease.id);
  return how;
}
