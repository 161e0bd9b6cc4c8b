// The agents of a multi-agent turn (docs/agents.md), as the in-process driver performs them. Core
// decides everything (which agent is active, that a `transfer_task` call runs a child turn, what
// its end means for the parent); this module only knows, for an effect core gave, whose model,
// tools and transcript perform it:
// - an effect naming an `agent` (after a handoff) is performed with that agent's model and tools,
//   on the same transcript;
// - a `child` effect is performed in the child turn's own context (its agent's model and tools, its
//   own transcript), and its event goes back wrapped as `child`.

import { createTurn, type Message, type TurnState } from '@turnkit/core';
import { layerLimits, type TurnLimits } from '@turnkit/core/internal';
import { agentTools } from '@turnkit/dispatch';
import type { AgentTarget } from '@turnkit/dispatch/internal';
import type { AgentDirectory, AgentEntry, HandlerContext } from './driver-types.js';
import { dispatcherMaker, startTranscript, withRetryOptions } from './options.js';
import type { NamedAgent, AgentOptions } from './types.js';

type Named = AgentOptions & { readonly name?: string; readonly description?: string };

/** True when `options` makes a multi-agent turn: it has a name, delegates, handoffs or models. */
export function isMultiAgent(options: Named): boolean {
  return (
    options.name !== undefined ||
    options.delegates !== undefined ||
    options.handoffs !== undefined ||
    options.models !== undefined
  );
}

/**
 * The options with the runtime tools their delegates, handoffs and models call for added to
 * `tools` (which must then be a list of definitions, not a dispatcher).
 */
export function withAgentTools<T extends Named>(options: T, fn: string): T {
  const delegates = options.delegates ?? [];
  const handoffs = options.handoffs ?? [];
  const models = options.models ?? [];
  if (delegates.length + handoffs.length + models.length === 0) return options;
  const where = options.name === undefined ? fn : `${fn}: agent '${options.name}'`;
  if (options.name === undefined)
    throw new TypeError(`${fn}: an agent with delegates, handoffs or models needs a \`name\` (its name in the agent path).`);
  if (options.tools !== undefined && !Array.isArray(options.tools))
    throw new TypeError(
      `${where}: with delegates, handoffs or models, \`tools\` must be a list of tool definitions (the runtime tools join it), not a dispatcher.`,
    );
  if (!Array.isArray(models) || models.some((m) => typeof m !== 'string' || m === ''))
    throw new TypeError(`${where}: \`models\` must be an array of model ids (non-empty strings).`);
  const runtime = agentTools({ delegates: delegates.map(target), handoffs: handoffs.map(target), models });
  return { ...options, tools: [...(options.tools ?? []), ...runtime] };
}

function target(definition: NamedAgent): AgentTarget {
  const base = { name: definition.name, description: definition.description, limits: entryLimits(definition, 'agent') };
  return definition.system === undefined ? base : { ...base, system: definition.system };
}

/** An agent's own limits, its retry options and its tools' loop exemptions included (as `prepareAgent` builds them). */
function entryLimits(options: AgentOptions, fn: string): TurnLimits {
  const limits = withRetryOptions(options.limits, options, fn);
  const tools = Array.isArray(options.tools) ? options.tools : [];
  const merged = layerLimits(
    [limits],
    tools.filter((t) => t.loopExempt).map((t) => t.name),
  );
  return createTurn(merged === undefined ? { id: 'template' } : { id: 'template', limits: merged }).limits;
}

/**
 * Every agent reachable from `root` through `delegates` and `handoffs`, checked: each has a
 * name and a description (but the root), and no two different definitions share a name.
 */
export function agentDirectory(root: Named, fn: string): AgentDirectory {
  const found = new Map<string, AgentOptions>();
  const visit = (agent: Named, path: string): void => {
    const name = agent.name;
    if (typeof name !== 'string' || name === '' || name.length > 256)
      throw new TypeError(`${fn}: ${path} needs a \`name\` (1 to 256 characters).`);
    const seen = found.get(name);
    if (seen === agent) return;
    if (seen !== undefined) throw new TypeError(`${fn}: two different agents are named '${name}'; give each its own name.`);
    found.set(name, agent);
    for (const key of ['delegates', 'handoffs'] as const) {
      const list = agent[key];
      if (list === undefined) continue;
      if (!Array.isArray(list)) throw new TypeError(`${fn}: agent '${name}' option \`${key}\` must be an array of agents.`);
      list.forEach((other: NamedAgent, i) => {
        if (other === null || typeof other !== 'object')
          throw new TypeError(`${fn}: agent '${name}' ${key}[${i}] is not an agent.`);
        if (typeof other.description !== 'string' || other.description === '')
          throw new TypeError(
            `${fn}: agent '${String(other.name)}' (${key} of '${name}') needs a \`description\`: the model reads it to choose.`,
          );
        visit(other, `${key}[${i}] of agent '${name}'`);
      });
    }
  };
  visit(root, 'the agent');
  const directory = new Map<string, AgentEntry>();
  for (const [name, own] of found) {
    // The turn's execution wrapper (a tracer's, say) wraps every agent's tools unless one has its own.
    const options =
      own === root || own.wrapExecution !== undefined || root.wrapExecution === undefined
        ? own
        : { ...own, wrapExecution: root.wrapExecution };
    const withTools = withAgentTools({ ...options, name }, fn);
    directory.set(name, { options: withTools, dispatcher: dispatcherMaker(withTools, fn), limits: entryLimits(options, fn) });
  }
  return directory;
}

// The contexts of one turn's agents and children, by the turn's transcript (one array per turn
// level: a handoff keeps it, a child has its own), so every effect of a level finds the same ones.
const contexts = new WeakMap<Message[], Map<string, HandlerContext>>();

function memo(transcript: Message[], key: string, make: () => HandlerContext): HandlerContext {
  let map = contexts.get(transcript);
  if (map === undefined) {
    map = new Map();
    contexts.set(transcript, map);
  }
  let made = map.get(key);
  if (made === undefined) {
    made = make();
    map.set(key, made);
  }
  return made;
}

function entry(ctx: HandlerContext, agent: string): AgentEntry {
  const found = ctx.agents?.get(agent);
  if (found === undefined)
    throw new Error(
      `the turn names the agent '${agent}', which is not among its agents (${[...(ctx.agents?.keys() ?? [])].join(', ')})`,
    );
  return found;
}

/** The options of an agent that serve its effects: its model, output checks and tool selection. */
function agentParts(options: AgentOptions) {
  return {
    model: options.model,
    output: options.output ?? undefined,
    check: options.check,
    compact: options.compact,
    selectTools: options.selectTools,
    alwaysOffer: options.alwaysOffer,
  };
}

/** The context that performs an effect core gave for `agent` (the active one after a handoff): `ctx` itself when it is that agent's. */
export function contextFor(ctx: HandlerContext, agent: string | undefined): HandlerContext {
  if (agent === undefined || ctx.agents === undefined || ctx.agentPath?.at(-1) === agent) return ctx;
  return memo(ctx.transcript, `agent:${agent}`, () => {
    const found = entry(ctx, agent);
    return {
      ...ctx,
      ...agentParts(found.options),
      dispatcher: found.dispatcher(),
      agentPath: [...(ctx.agentPath ?? []).slice(0, -1), agent],
    };
  });
}

/** The context of the child turn of the `transfer_task` call `callId`: its agent's model and tools, its own transcript. */
export function childContext(ctx: HandlerContext, callId: string, agent: string): HandlerContext {
  return memo(ctx.transcript, `child:${callId}`, () => {
    const found = entry(ctx, agent);
    const turnId = `${ctx.turnId}/${callId}`;
    const kept = ctx.childTranscripts?.[turnId];
    return {
      turnId,
      ...agentParts(found.options),
      dispatcher: found.dispatcher(),
      transcript: kept === undefined ? startTranscript(found.options.system, []) : [...kept],
      signal: ctx.signal,
      approve: ctx.approve,
      whenUndecided: ctx.whenUndecided,
      session: ctx.session,
      context: ctx.context,
      agents: ctx.agents,
      agentPath: [...(ctx.agentPath ?? []), agent],
      childTranscripts: ctx.childTranscripts,
    };
  });
}

/** The context of the turn that acts now in a tree (core's `activeTurn`): a child's, at any depth, or `ctx`. */
export function contextAt(
  ctx: HandlerContext,
  active: { readonly state: TurnState; readonly agentPath: readonly string[]; readonly callPath: readonly string[] },
  root: TurnState,
): HandlerContext {
  let current = ctx;
  let state = root;
  for (const callId of active.callPath) {
    const started = state.agents?.delegations[0]?.agent ?? '';
    current = childContext(current, callId, started);
    state = state.agents?.child ?? state;
  }
  return contextFor(current, active.state.agents?.agent);
}

/** The transcripts of the child turns on the path to the acting turn, by child turn id: what a suspended result keeps. */
export function childTranscripts(ctx: HandlerContext, root: TurnState): Record<string, readonly Message[]> {
  const out: Record<string, readonly Message[]> = {};
  let current = ctx;
  let state = root;
  while (state.status === 'delegating' && state.agents?.child != null) {
    const first = state.agents.delegations[0];
    if (first === undefined) break;
    current = childContext(current, first.callId, first.agent);
    out[current.turnId] = [...current.transcript];
    state = state.agents.child;
  }
  return out;
}
