// The shape of a scenario file (what `turnkit run` loads): types only, shared by the loader of
// module scenarios (scenario.ts) and of JSON ones (json-scenario.ts).
import type { Model, TurnLimitsInput } from '@turnkit/core';
import type { AfterHook, BeforeHook, Budget, DispatcherOptions, Policy, ToolDefinition } from '@turnkit/dispatch';
import type { CheckFn, CompactFn, NamedAgent, OutputSchema } from '@turnkit/inline';
import type { AgentDefinition } from '@turnkit/store';

/** What a scenario's model function is given: the model calls the turn has made already. */
export interface ModelStart {
  /** 0 for `turnkit run`; for `turnkit resume`, the calls the suspended run's model answered. */
  readonly startAt: number;
}

/** A scenario's model as a function, called once per run; a scripted model passes `startAt` on. */
export type ModelFactory = (start: ModelStart) => Model;

/**
 * What a scenario module exports, as `export default { … }` or `export const scenario = { … }`.
 *
 * @example
 * export const scenario: ScenarioFile = { input: 'What is 1 + 2?', tools: [add], model: ({ startAt }) => scriptedModel([...], { startAt }) };
 */
export interface ScenarioFile {
  /** The user's message. */
  readonly input: string;
  /** Tools made with `defineTool` from @turnkit/dispatch. */
  // any: each tool has its own input type.
  readonly tools: readonly ToolDefinition<any>[];
  /**
   * The model, or a function making it (called once per run with `{ startAt }`). Optional when
   * `--provider` is given. A turn can be resumed only with a function: a scripted model must
   * start at `startAt`, the replies the suspended run used.
   */
  readonly model?: Model | ModelFactory;
  /** The turn's limits (each field and its default: `TurnLimitsInput` in @turnkit/core). */
  readonly limits?: TurnLimitsInput;
  /** The system prompt. */
  readonly system?: string;
  /** Permission rules (`{ deny, allow, ask }` of tool patterns) or layered named sets, as `createDispatcher` takes them. */
  readonly permissions?: DispatcherOptions['permissions'];
  /** A policy function, as `createDispatcher` takes it. */
  readonly policy?: Policy;
  /** Before- and after-hooks of every tool call, as `createDispatcher` takes them. */
  readonly hooks?: { readonly before?: readonly BeforeHook[]; readonly after?: readonly AfterHook[] };
  /** A zod schema the final answer (parsed as JSON) must match; a failure is sent back for repair. */
  readonly output?: OutputSchema;
  /** Tool-call budgets of the turn (as `createDispatcher`'s `budget`): a call past one is not run and gets an error result. */
  readonly budget?: Budget;
  /** A custom check of the final answer, after `output` (as `runTurn`'s `check`); a rejection goes back to the model for repair. */
  readonly check?: CheckFn;
  /** Shrinks the transcript between rounds (as `runTurn`'s `compact`, with its contract). */
  readonly compact?: CompactFn;
  /**
   * Asked for hooks each time the turn runs (as a stored agent's `observe`): once by `turnkit run`,
   * again by each `turnkit resume` (with the trace context the run before kept), and by a worker
   * for each activation of a stored turn.
   */
  readonly observe?: AgentDefinition['observe'];
  /**
   * At most this many turns of the agent run at once across the workers of a store (as a stored
   * agent's `maxRunning`). A run in the CLI's process is one turn, within any cap.
   */
  readonly maxRunning?: number;
  /**
   * MCP servers whose tools join `tools`, by name: `{ command, args? }` (stdio) or `{ url }` (HTTP),
   * checked by @turnkit/mcp (`McpServers`), which must be installed next to the CLI.
   */
  readonly mcpServers?: { readonly [server: string]: object };
  /**
   * The scenario's agent's name, the root of the agent path (docs/agents.md); required with
   * `delegates`, `handoffs` or `models`.
   */
  readonly name?: string;
  /**
   * Agents the model may give a task to (`transfer_task`), each as `runTurn` takes it
   * (`NamedAgent`: `name`, `description`, its own `model`, such as a scripted one, `system`,
   * `tools`, `limits`, and its own `delegates`, `handoffs`, `models`).
   */
  readonly delegates?: readonly ScenarioFileAgent[];
  /** Agents the model may hand the rest of the turn to (`handoff`), as `delegates`. */
  readonly handoffs?: readonly ScenarioFileAgent[];
  /** Model ids the model may switch the rest of the turn to (`change_model`). */
  readonly models?: readonly string[];
}

/**
 * An agent of a scenario's tree (`delegates`, `handoffs`): an agent as `runTurn` takes it
 * (`NamedAgent`), whose `model` may also be a function of the calls it answered already, as the
 * scenario's own: `turnkit resume` of a tree continues each agent's script where it was
 * (docs/agents.md, "From the command line").
 */
export interface ScenarioFileAgent extends Omit<NamedAgent, 'model' | 'delegates' | 'handoffs'> {
  /** The agent's model, or a function making it (called once per run with `{ startAt }`: the calls this agent answered so far). */
  readonly model: Model | ModelFactory;
  /** Agents this agent may give a task to. */
  readonly delegates?: readonly ScenarioFileAgent[];
  /** Agents this agent may hand the rest of its turn to. */
  readonly handoffs?: readonly ScenarioFileAgent[];
}
