// An agent of a scenario or an agents file, one format for the CLI and the library: what a worker
// is given of it (`agentDefinition`) and what runTurn / resumeTurn are given of it in this process
// (`agentTurnOptions`), each one mapping for every command. Nothing here applies an option by
// itself: the dispatcher applies the rules, hooks and budget, runTurn the rest, and the agent's
// `observe` is asked as a worker asks it (@turnkit/store's `startObserver`).

import type { Model } from '@turnkit/core';
import { definedProps } from '@turnkit/core/internal';
import { createDispatcher, type ToolDefinition } from '@turnkit/dispatch';
import type { BudgetUsage, ExecutionWrapper } from '@turnkit/dispatch/internal';
import type { RunTurnOptions } from '@turnkit/inline';
import type { AgentDefinition } from '@turnkit/store';
import type { ScenarioAgents } from './scenario-agents.js';
import type { ScenarioFile } from './scenario-file.js';

/** The fields of a scenario that define its agent (all but `input`, `model` and `mcpServers`). */
export type AgentFields = Omit<ScenarioFile, 'input' | 'model' | 'mcpServers'>;

/** A scenario as the agent a worker runs, with `model` (its input is the turn's, not the agent's). */
export function agentDefinition(scenario: AgentFields, model: Model): AgentDefinition {
  return {
    model,
    tools: scenario.tools,
    ...definedProps({ system: scenario.system }),
    ...definedProps({ limits: scenario.limits }),
    ...definedProps({ output: scenario.output }),
    ...definedProps({ permissions: scenario.permissions }),
    ...definedProps({ policy: scenario.policy }),
    ...definedProps({ hooks: scenario.hooks }),
    ...definedProps({ budget: scenario.budget }),
    ...definedProps({ check: scenario.check }),
    ...definedProps({ compact: scenario.compact }),
    ...definedProps({ observe: scenario.observe }),
    ...definedProps({ maxRunning: scenario.maxRunning }),
    ...definedProps({ models: scenario.models }),
  };
}

/** What a run in this process adds to the agent: its tools (the agent's, timed, and MCP tools), and what a resume restores. */
export interface InProcessRun {
  // any: each tool has its own input type.
  readonly tools: readonly ToolDefinition<any>[];
  /** The budget counts of a suspended turn (a resume). */
  readonly budgetUsage?: BudgetUsage;
  /** The agent's observer's wrapper around every tool execution. */
  readonly wrapExecution?: ExecutionWrapper;
  /** A tree's agents, each with its model made for this run (`scenarioAgents`): what runTurn is given as `delegates` and `handoffs`. */
  readonly agents?: Pick<ScenarioAgents, 'delegates' | 'handoffs'>;
}

/**
 * The agent as runTurn and resumeTurn take it: its dispatcher (made by `createDispatcher` from its
 * tools, rules, hooks and budget, as a library user gives a budget to runTurn) and its turn
 * options. `maxRunning` caps stored turns only (a run here is one turn); `observe` is the caller's
 * (see turn.ts). Throws what `createDispatcher` throws for options it refuses.
 *
 * A turn of many agents (`delegates`, `handoffs` or `models`, docs/agents.md) gives runTurn its
 * tools as a list with the rules and hooks beside them, since runTurn adds the runtime tools
 * (`transfer_task`, `handoff`, `change_model`) to the list and makes each agent's dispatcher; a
 * dispatcher budget has no place there and is refused, naming what to do.
 */
export function agentTurnOptions(
  agent: AgentFields,
  run: InProcessRun,
): Pick<
  RunTurnOptions,
  | 'tools'
  | 'policy'
  | 'permissions'
  | 'hooks'
  | 'wrapExecution'
  | 'system'
  | 'limits'
  | 'output'
  | 'check'
  | 'compact'
  | 'name'
  | 'delegates'
  | 'handoffs'
  | 'models'
> {
  const tree = agent.delegates !== undefined || agent.handoffs !== undefined || agent.models !== undefined;
  if (tree && agent.budget !== undefined)
    throw new TypeError(
      '`budget` is a dispatcher budget, which a turn of many agents cannot take in this process (each agent has its own dispatcher): bound the turn with `limits.budget` (maxToolCalls, maxCost), which core holds across the tree.',
    );
  const rules = {
    ...definedProps({ policy: agent.policy }),
    ...definedProps({ permissions: agent.permissions }),
    ...definedProps({ hooks: agent.hooks }),
    ...definedProps({ wrapExecution: run.wrapExecution }),
  };
  return {
    ...(tree
      ? { tools: run.tools, ...rules }
      : {
          tools: createDispatcher({
            tools: run.tools,
            ...rules,
            ...definedProps({ budget: agent.budget }),
            ...definedProps({ budgetUsage: run.budgetUsage }),
          }),
        }),
    ...definedProps({ system: agent.system }),
    ...definedProps({ limits: agent.limits }),
    ...definedProps({ output: agent.output }),
    ...definedProps({ check: agent.check }),
    ...definedProps({ compact: agent.compact }),
    ...definedProps({ name: agent.name }),
    ...definedProps({ delegates: run.agents?.delegates }),
    ...definedProps({ handoffs: run.agents?.handoffs }),
    ...definedProps({ models: agent.models }),
  };
}
