// The agent `checkAgent` checks: the parts of an agent definition that decide what a turn does
// with tool calls. `createAgent`'s options, a store worker's `AgentDefinition` and a scenario file
// all have this shape (extra fields, such as `model` or `system`, are ignored).

import type { TurnLimitsInput } from '@turnkit/core';
import { definedProps } from '@turnkit/core/internal';
import type { BeforeHook, Budget, DispatcherOptions, Permissions, Policy, ToolDefinition } from '@turnkit/dispatch';
import type { NamedPermissions } from '@turnkit/dispatch/internal';

/**
 * The agent `checkAgent` checks: the parts of an agent definition that decide what a turn does with tool calls
 * (`createAgent`'s options, a store's `AgentDefinition` and a scenario file all fit; other fields are ignored).
 */
export interface CheckedAgent {
  // any: each tool has its own input type.
  /** The agent's tools (their schemas, `readOnly`, `needsApproval`, `loopExempt`). */
  readonly tools?: readonly ToolDefinition<any>[];
  /** The agent's turn limits (rounds, loops, budgets), as `runTurn` takes them. */
  readonly limits?: TurnLimitsInput;
  /** Permission rules, as `createDispatcher` takes them. */
  readonly permissions?: Permissions | readonly NamedPermissions[];
  /** What a call no rule decided gets, as `createDispatcher`'s `defaultDecision` (default `ask`). */
  readonly defaultDecision?: 'ask' | 'allow';
  /** Code: enters the check as the answers it can give (`CheckAgentOptions.policyAnswers`). */
  readonly policy?: Policy;
  /** Code: the before-hooks enter as the answers they can give (`CheckAgentOptions.hookAnswers`); after-hooks are not modelled. */
  readonly hooks?: { readonly before?: readonly BeforeHook[] };
  /** The dispatcher's call budget. */
  readonly budget?: Budget;
  /** Every ask becomes an allow, as `createDispatcher`'s `yolo`. */
  readonly yolo?: boolean;
  /** No one can approve: an ask becomes a denial, as `createDispatcher`'s `nonInteractive`. */
  readonly nonInteractive?: boolean;
  /** With an output schema or check the final answer may be rejected (and repaired); without, it is accepted. */
  readonly output?: unknown;
  /** A custom output check: with it, the final answer may be rejected (and repaired). */
  readonly check?: unknown;
}

/**
 * The dispatcher options of an agent: what `checkAgent` explores and what a counterexample test
 * runs, so both read the agent the same way. `tools` replaces the agent's (a test's stubs).
 *
 * @example const dispatcher = createDispatcher(agentDispatcherOptions(agent, stubbedTools));
 */
export function agentDispatcherOptions(agent: CheckedAgent, tools = agent.tools ?? []): DispatcherOptions {
  return {
    tools,
    ...definedProps({ permissions: agent.permissions }),
    ...definedProps({ defaultDecision: agent.defaultDecision }),
    ...definedProps({ policy: agent.policy }),
    ...definedProps({ hooks: agent.hooks?.before === undefined ? undefined : { before: agent.hooks.before } }),
    ...definedProps({ budget: agent.budget }),
    ...definedProps({ yolo: agent.yolo }),
    ...definedProps({ nonInteractive: agent.nonInteractive }),
  };
}

/**
 * The agent a module exports, read as `turnkit check --agent` reads an agents file: `agents[name]`
 * (the only one when `name` is not given), else `agent`, else the scenario (`scenario` or
 * `default`). Throws a TypeError that says what to export.
 *
 * @example const agent = agentFromModule(await import('./agents.ts'), 'support');
 */
export function agentFromModule(module: Record<string, unknown>, name?: string): CheckedAgent {
  const agents = module.agents;
  if (agents !== undefined) {
    if (agents === null || typeof agents !== 'object' || Array.isArray(agents))
      throw new TypeError('`agents` must be an object { [name]: { tools, permissions, … } }.');
    const names = Object.keys(agents);
    const picked = name ?? (names.length === 1 ? names[0] : undefined);
    if (picked === undefined)
      throw new TypeError(`The file exports ${names.length} agents (${names.join(', ') || 'none'}): name one.`);
    const agent = (agents as Record<string, unknown>)[picked];
    if (agent === undefined) throw new TypeError(`No agent '${picked}' in \`agents\` (it has ${names.join(', ') || 'none'}).`);
    return checkedAgent(agent, `agents.${picked}`);
  }
  const single = module.agent ?? module.scenario ?? module.default;
  if (single === undefined)
    throw new TypeError(
      'The file exports no agent: export `agents` ({ name: { tools, permissions, … } }), `agent`, or a scenario.',
    );
  return checkedAgent(single, module.agent !== undefined ? 'agent' : 'the scenario');
}

function checkedAgent(value: unknown, what: string): CheckedAgent {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new TypeError(
      `${what} must be an object { tools, permissions?, limits?, … }, got ${value === null ? 'null' : typeof value}.`,
    );
  const tools = (value as CheckedAgent).tools;
  if (tools !== undefined && !Array.isArray(tools))
    throw new TypeError(`${what}.tools must be an array of tools made with defineTool.`);
  return value as CheckedAgent;
}
