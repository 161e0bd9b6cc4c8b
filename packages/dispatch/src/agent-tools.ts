// The runtime tools of a multi-agent turn (docs/agents.md): `transfer_task`, `handoff` and
// `change_model`. They are ordinary tool definitions, so their calls pass the whole pipeline
// (validation against the allowed names, hooks, policy and permission rules by name, approvals,
// budgets, records, after-hooks). Running one changes nothing by itself: its result carries an
// `action` (core's `AgentAction`), and core does what it says once the call has run: start a child
// turn, change the active agent, change the model.

import type { TurnLimitsInput } from '@turnkit/core';
import type { AgentAction } from '@turnkit/core/internal';
import * as z from 'zod';
import { defineTool, type ToolDefinition } from './define.js';
import type { AnyTool } from './config.js';

/** An agent another one may delegate to or hand off to, as the runtime tools describe it. */
export interface AgentTarget {
  /** The agent's name, one of the names the tool's input schema allows. */
  readonly name: string;
  /** What the agent is for: the model reads it when it chooses whom to delegate to or hand off to. */
  readonly description: string;
  /** The agent's system prompt (a handoff appends it to the transcript). */
  readonly system?: string;
  /** The agent's own limits (a child turn runs with them; a handoff applies them where stricter). */
  readonly limits?: TurnLimitsInput;
}

/** What an agent may do besides its own tools: whom it delegates to, whom it hands off to, which models it may switch to. */
export interface AgentToolsOptions {
  /** The agents a task may be given to: with any, the model sees `transfer_task`. */
  readonly delegates?: readonly AgentTarget[];
  /** The agents the turn may be handed to: with any, the model sees `handoff`. */
  readonly handoffs?: readonly AgentTarget[];
  /** The models the rest of the turn may run on: with any, the model sees `change_model`. */
  readonly models?: readonly string[];
}

// The action of a runtime tool's call, from its validated input; read by the pipeline (stage 8).
const actions = new WeakMap<AnyTool, (input: unknown) => AgentAction>();

/** The `action` a call of `tool` with `input` carries on its result, or undefined for any other tool. */
export function agentActionOf(tool: AnyTool, input: unknown): AgentAction | undefined {
  return actions.get(tool)?.(input);
}

/**
 * The runtime tools for `options`: `transfer_task` when there are delegates, `handoff` when there
 * are handoff targets, `change_model` when there are models. Their input schemas list the allowed
 * names (an enum), so a call naming any other agent or model fails validation like any bad input.
 * They are read-only: they change nothing outside the turn, so the default policy runs them
 * without asking; a permission rule by name (`ask: ['handoff']`) makes a person decide.
 *
 * @example
 * const tools = [...myTools, ...agentTools({ delegates: [{ name: 'researcher', description: 'Finds facts.' }] })];
 */
export function agentTools(options: AgentToolsOptions): ToolDefinition<any>[] {
  const tools: ToolDefinition<any>[] = [];
  const delegates = options.delegates ?? [];
  const handoffs = options.handoffs ?? [];
  const models = options.models ?? [];
  if (delegates.length > 0) {
    const byName = new Map(delegates.map((d) => [d.name, d]));
    const tool = defineTool({
      name: 'transfer_task',
      description: `Gives a task to another agent and returns its answer. The agents: ${list(delegates)}`,
      input: z.object({
        agent: z.enum(names(delegates)).describe('The agent to give the task to.'),
        task: z.string().min(1).describe('The task, with everything the agent needs to know: it does not see this conversation.'),
      }),
      readOnly: true,
      execute: ({ agent }) => `The task was given to the agent '${agent}'.`,
    });
    actions.set(tool, (input) => {
      const { agent, task } = input as { agent: string; task: string };
      return { type: 'transfer', agent, task, limits: (byName.get(agent) as AgentTarget).limits ?? {} };
    });
    tools.push(tool);
  }
  if (handoffs.length > 0) {
    const byName = new Map(handoffs.map((d) => [d.name, d]));
    const tool = defineTool({
      name: 'handoff',
      description: `Hands the conversation over to another agent for the rest of the turn. The agents: ${list(handoffs)}`,
      input: z.object({ agent: z.enum(names(handoffs)).describe('The agent to hand over to.') }),
      readOnly: true,
      execute: ({ agent }) => `Handed off to the agent '${agent}'.`,
    });
    actions.set(tool, (input) => {
      const target = byName.get((input as { agent: string }).agent) as AgentTarget;
      const base = { type: 'handoff' as const, agent: target.name, limits: target.limits ?? {} };
      return target.system === undefined ? base : { ...base, system: target.system };
    });
    tools.push(tool);
  }
  if (models.length > 0) {
    const tool = defineTool({
      name: 'change_model',
      description: `Switches the model that answers for the rest of the turn. The models: ${models.join(', ')}.`,
      input: z.object({ model: z.enum(models as [string, ...string[]]).describe('The model to switch to.') }),
      readOnly: true,
      execute: ({ model }) => `Switched to the model '${model}'.`,
    });
    actions.set(tool, (input) => ({ type: 'change_model', model: (input as { model: string }).model }));
    tools.push(tool);
  }
  return tools;
}

function names(targets: readonly AgentTarget[]): [string, ...string[]] {
  return targets.map((t) => t.name) as [string, ...string[]];
}

function list(targets: readonly AgentTarget[]): string {
  return targets.map((t) => `'${t.name}' (${t.description})`).join('; ');
}
