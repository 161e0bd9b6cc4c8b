// What a conformance interpreter over a stored-turn client shares, whichever engine runs the turn
// (the store's workers, DBOS workflows): a scenario's options as an agent, a tool that counts its
// runs, and the stored turn read back as runTurn returns it.

import type { Message } from '@turnkit/core';
import type { DispatcherOptions, ToolDefinition } from '@turnkit/dispatch';
import type { AgentDefinition, StoreClient, StoredTurn } from '@turnkit/store';
import type { ConformanceResult, ConformanceRunOptions } from '@turnkit/testing';

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
