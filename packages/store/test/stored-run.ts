// What a conformance interpreter over a stored-turn client shares, whichever engine runs the turn
// (the store's workers, DBOS workflows): a scenario's options as an agent, a tool that counts its
// runs, and the stored turn read back as runTurn returns it.

import type { ApprovalDecision, Message, Model } from '@turnkit/core';
import type { DispatcherOptions, ToolDefinition } from '@turnkit/dispatch';
import type { AgentDefinition, StoreClient, StoredTurn } from '@turnkit/store';
import type { ConformanceResult, ConformanceRunOptions } from '@turnkit/testing';
import type { AgentScenarioOptions, ConformanceResumeOptions, ScenarioAgent } from '@turnkit/testing/internal';

/** The options an engine needs from a run or a resume. */
export type AgentOptions = Omit<ConformanceRunOptions, 'input' | 'tools' | 'id'>;

/**
 * The scenario's options as an agent (model, system prompt, limits, output schema, and the tools
 * with the permissions, hooks and policy the scenario's dispatcher was made with), its tools
 * counting their runs in `runs`. `engine` names the adapter in the error for an option it cannot carry.
 */
export function agentForRun(run: AgentOptions, runs: Map<string, number>, engine: string): AgentDefinition {
  const {
    tools = [],
    permissions,
    hooks,
    policy,
    budget,
    ...rest
  } = run.dispatcherOptions ?? ({ tools: [] } as DispatcherOptions);
  // An option the agent cannot carry would silently change the scenario: refuse it.
  const unknown = Object.keys(rest);
  if (unknown.length > 0)
    throw new Error(`the ${engine} adapter cannot give an agent the dispatcher options ${unknown.join(', ')}`);
  if (Array.isArray(permissions)) throw new Error(`the ${engine} adapter cannot give an agent named permission sets`);
  return {
    model: run.model,
    tools: tools.map((tool) => counted(tool, runs)),
    ...(run.system === undefined ? {} : { system: run.system }),
    ...(run.limits === undefined ? {} : { limits: run.limits }),
    ...(run.output === undefined ? {} : { output: run.output }),
    ...(permissions === undefined ? {} : { permissions: permissions as NonNullable<AgentDefinition['permissions']> }),
    ...(hooks === undefined ? {} : { hooks }),
    ...(policy === undefined ? {} : { policy }),
    ...(budget === undefined ? {} : { budget }),
  };
}

/** Fails when a tool ran more than once for one call (no corpus tool is idempotent). */
export function assertRanOnce(runs: Map<string, number>): void {
  const twice = [...runs].filter(([, n]) => n > 1).map(([callId]) => callId);
  if (twice.length > 0) throw new Error(`tools ran more than once for calls ${twice.join(', ')}`);
}

export async function readTurn(client: Pick<StoreClient, 'get'>, id: string): Promise<StoredTurn> {
  const turn = await client.get(id);
  if (turn === null) throw new Error(`turn '${id}' is not stored`);
  return turn;
}

/** The stored turn as runTurn returns it: the system message first, the outcome's fields spread. */
export function resultOf(turn: StoredTurn, system: string | undefined): ConformanceResult {
  const transcript: readonly Message[] =
    system === undefined ? turn.transcript : [{ role: 'system', content: system }, ...turn.transcript];
  const last = transcript.findLast((m) => m.role === 'assistant');
  const text = last?.role === 'assistant' ? last.content : '';
  const base = { text, state: turn.state, transcript };
  const outcome = turn.outcome;
  if (turn.status === 'awaiting_approval') return { ...base, status: 'suspended', output: null, pending: turn.parked };
  if (outcome === null) throw new Error(`turn '${turn.id}' is '${turn.status}' with no outcome, and nothing will run it`);
  switch (outcome.status) {
    case 'stopped':
      return { ...base, status: 'stopped', output: outcome.output, stopReason: outcome.stopReason };
    case 'failed':
      return { ...base, status: 'failed', output: null, error: turn.error ?? outcome.error };
    case 'cancelled':
      return { ...base, status: 'cancelled', output: null };
  }
}

/** A tool that counts its runs by call id. */
// any: each tool has its own input type.
function counted(tool: ToolDefinition<any>, runs: Map<string, number>): ToolDefinition<any> {
  return {
    ...tool,
    execute(input: unknown, ctx: { readonly callId: string }) {
      runs.set(ctx.callId, (runs.get(ctx.callId) ?? 0) + 1);
      return tool.execute(input, ctx as Parameters<typeof tool.execute>[1]);
    },
  };
}

/** What `settleStored` drives a stored turn with: the engine's side and the scenario's caller. */
export interface StoredCaller {
  /** Runs the turn until nothing more happens without a caller (it ended, or it waits for decisions). */
  readonly drive: () => Promise<void>;
  readonly client: Pick<StoreClient, 'get' | 'decide' | 'cancel'>;
  /** The scenario's approve callback: asked for the parked calls, with the agent path of a child's. */
  readonly approve?: (
    parked: StoredTurn['parked'],
    info: { readonly turnId: string; readonly agentPath?: readonly string[] },
  ) => Promise<Record<string, ApprovalDecision>> | Record<string, ApprovalDecision>;
  /** The scenario's abort signal: a cancel of the stored turn. */
  readonly signal?: AbortSignal;
}

/**
 * A stored turn as a caller of the client API drives it: `drive` until it settles, then the parked
 * calls to `approve` and its decisions to `decide`, until the turn ends or waits for decisions
 * nobody gives (a call the callback left out stays parked: a stored approval has no callback to
 * expire it). The signal's abort is a `cancel`; one written after the engine went idle needs it
 * to drive the turn again. Returns the turn as last read.
 */
export async function settleStored(id: string, caller: StoredCaller): Promise<StoredTurn> {
  const { client, signal, approve } = caller;
  let cancelling: Promise<boolean> | null = null;
  const onAbort = (): void => {
    cancelling = client.cancel(id, typeof signal?.reason === 'string' ? signal.reason : undefined);
  };
  if (signal?.aborted === true) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  const leftOut = new Set<string>();
  try {
    for (;;) {
      await caller.drive();
      const cancel: Promise<boolean> | null = cancelling;
      cancelling = null;
      if (cancel !== null && (await cancel)) continue;
      const turn = await readTurn(client, id);
      if (turn.status !== 'awaiting_approval' || approve === undefined) return turn;
      const asked = turn.parked.filter((p) => !leftOut.has(p.call.id));
      if (asked.length === 0) return turn;
      const agentPath = asked[0]?.agentPath;
      const decisions = await approve(asked, agentPath === undefined ? { turnId: id } : { turnId: id, agentPath });
      for (const p of asked) if (!Object.hasOwn(decisions, p.call.id)) leftOut.add(p.call.id);
      if (Object.keys(decisions).length === 0) return turn;
      await client.decide(id, decisions);
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/** The caller's part of a scenario's options: its approve callback and its abort signal, when given. */
export function callerOf(run: {
  readonly approve?: StoredCaller['approve'] | undefined;
  readonly signal?: AbortSignal | undefined;
}): Pick<StoredCaller, 'approve' | 'signal'> {
  return {
    ...(run.approve === undefined ? {} : { approve: run.approve }),
    ...(run.signal === undefined ? {} : { signal: run.signal }),
  };
}

/**
 * A conformance resume on a stored turn: the suspended state names the turn (what a caller keeps
 * to find it again), the decisions go through `decide`, and what is left of the options is the
 * run's (its model, approve callback, signal, ...), for the adapter to settle the turn with.
 */
export async function decideStored(
  client: Pick<StoreClient, 'decide'>,
  options: ConformanceResumeOptions,
): Promise<{ readonly id: string; readonly rest: AgentOptions }> {
  const id = (options.state as { readonly id?: unknown } | null)?.id;
  if (typeof id !== 'string') throw new Error('the suspended state has no turn id');
  await client.decide(id, options.decisions as Record<string, ApprovalDecision>);
  const {
    tools: _tools,
    id: _id,
    state: _state,
    transcript: _transcript,
    decisions: _decisions,
    grants: _grants,
    ...rest
  } = options;
  return { id, rest };
}

/**
 * A multi-agent scenario's tree as agents registered by name (`delegates` and `handoffs` as names,
 * each reached agent with its `description`), every tool counting its runs in `runs` by turn and
 * call id (a child turn's `call_1` is not its parent's). `model` gives each agent's model (as it
 * is, or wrapped), `root` what the root agent has besides.
 */
export function treeAgents(
  root: AgentScenarioOptions,
  runs: Map<string, number>,
  model: (model: Model) => Model = (m) => m,
  extra: Partial<AgentDefinition> = {},
): Record<string, AgentDefinition> {
  const out: Record<string, AgentDefinition> = {};
  const add = (agent: ScenarioAgent | AgentScenarioOptions, description: string | undefined, isRoot: boolean): void => {
    if (Object.hasOwn(out, agent.name)) return;
    out[agent.name] = {
      model: model(agent.model),
      tools: (agent.tools ?? []).map((tool) => countedInTree(tool, runs)),
      ...(agent.system === undefined ? {} : { system: agent.system }),
      ...(description === undefined ? {} : { description }),
      ...(agent.limits === undefined ? {} : { limits: agent.limits }),
      ...(agent.delegates === undefined ? {} : { delegates: agent.delegates.map((a) => a.name) }),
      ...(agent.handoffs === undefined ? {} : { handoffs: agent.handoffs.map((a) => a.name) }),
      ...(agent.models === undefined ? {} : { models: agent.models }),
      ...(isRoot ? extra : {}),
    };
    for (const next of [...(agent.delegates ?? []), ...(agent.handoffs ?? [])]) add(next, next.description, false);
  };
  add(root, undefined, true);
  return out;
}

/** A tool that counts its runs by turn and call id. */
// any: each tool has its own input type.
function countedInTree(tool: ToolDefinition<any>, runs: Map<string, number>): ToolDefinition<any> {
  return {
    ...tool,
    execute(input: unknown, ctx: { readonly callId: string; readonly turnId: string }) {
      const key = `${ctx.turnId} ${ctx.callId}`;
      runs.set(key, (runs.get(key) ?? 0) + 1);
      return tool.execute(input, ctx as Parameters<typeof tool.execute>[1]);
    },
  };
}
