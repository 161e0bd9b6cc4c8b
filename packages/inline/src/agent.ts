// An agent defined once and run many times, as a server runs turns: its options are checked, its
// tools' configuration (tool specs and their JSON Schemas included) and its limits are built once;
// each run makes only what belongs to its turn (the state, the transcript, a dispatcher with its
// own grants and budget counts). `runTurn` is an agent prepared for one run.

import { randomUUID } from 'node:crypto';
import { createTurn, type Message, type Model, type Notice, type Effect, type TurnEvent } from '@turnkit/core';
import type { TurnLimits } from '@turnkit/core/internal';
import type { Dispatcher } from '@turnkit/dispatch';
import type { DriveOptions } from './context.js';
import { defaultHandlers, type EffectHandlers } from './driver.js';
import {
  checkCommon,
  checkToolSelection,
  dispatcherMaker,
  drive,
  mergeExempt,
  resumeTurn,
  startTranscript,
  withRetryOptions,
} from './run.js';
import type { ApproveFn, ResumeTurnOptions, RunTurnOptions, StepRecord, TurnResult } from './types.js';

/** What an agent is made of: the options of `runTurn` that stay the same from turn to turn. */
export type AgentOptions = Omit<RunTurnOptions, 'input' | 'transcript' | 'signal' | 'id' | 'trace'>;

/** What may differ from run to run. Given here, `model`, `approve` and the observers replace the agent's. */
export interface AgentRunOptions {
  /** Earlier messages of the conversation. */
  readonly transcript?: readonly Message[];
  readonly signal?: AbortSignal;
  readonly id?: string;
  /** Record every transition in `result.trace`. */
  readonly trace?: boolean;
  readonly model?: Model;
  readonly approve?: ApproveFn;
  readonly onNotice?: (notice: Notice) => void;
  readonly onEffect?: (effect: Effect) => void;
  readonly onStep?: (record: StepRecord) => void;
}

/** The options of `agent.resume`: what the suspended result carries, the decisions, and per-run options. */
export type AgentResumeOptions = Omit<ResumeTurnOptions, keyof AgentOptions> & Omit<AgentRunOptions, 'transcript' | 'trace'>;

export interface Agent {
  /** Runs one turn on `input`; as `runTurn` with the agent's options. */
  run(input: string, options?: AgentRunOptions): Promise<TurnResult>;
  /** Continues a suspended turn of this agent; as `resumeTurn` with the agent's options. */
  resume(options: AgentResumeOptions): Promise<TurnResult>;
}

/** The part of an agent built once. */
export interface PreparedAgent {
  readonly options: AgentOptions;
  readonly dispatcher: () => Dispatcher;
  readonly limits: TurnLimits;
}

/** Checks `options` and builds what every turn shares. Throws a TypeError naming the bad option. */
export function prepareAgent(options: AgentOptions, fn: string): PreparedAgent {
  const make = dispatcherMaker(options, fn);
  // The dispatcher made to check the options serves the first turn.
  let spare: Dispatcher | undefined = make();
  checkToolSelection(options, spare, fn);
  const limits = mergeExempt(withRetryOptions(options.limits, options, fn), spare);
  // createTurn checks the limits (a RangeError naming the limit) and fills in the defaults.
  const template = createTurn(limits === undefined ? { id: 'template' } : { id: 'template', limits });
  const dispatcher = (): Dispatcher => {
    const made = spare ?? make();
    spare = undefined;
    return made;
  };
  return { options, dispatcher, limits: template.limits };
}

/** Starts one turn of a prepared agent on `input`: `run` carries the per-run options (those of `runTurn` among them). */
export function startTurn(
  agent: PreparedAgent,
  run: AgentRunOptions,
  input: string | undefined,
  handlers: EffectHandlers,
): Promise<TurnResult> {
  if (input !== undefined && typeof input !== 'string') throw new TypeError('runTurn option `input` must be a string.');
  const initial = createTurn({ id: run.id ?? `turn_${randomUUID()}`, limits: agent.limits });
  const transcript = startTranscript(agent.options.system, run.transcript ?? []);
  const event: TurnEvent = input === undefined ? { type: 'start' } : { type: 'start', input };
  const options = run === agent.options ? (run as RunTurnOptions) : driveOptions(agent.options, run);
  return drive(options, agent.dispatcher(), transcript, initial, event, handlers);
}

/** The agent's options with a run's: one shape for every run, no copy of the agent's other options. */
function driveOptions(agent: AgentOptions, run: AgentRunOptions): DriveOptions {
  return {
    model: run.model ?? agent.model,
    signal: run.signal,
    trace: run.trace,
    onStep: run.onStep ?? agent.onStep,
    approve: run.approve ?? agent.approve,
    whenUndecided: agent.whenUndecided,
    session: agent.session,
    context: agent.context,
    decisions: agent.decisions,
    sealSecret: agent.sealSecret,
    output: agent.output,
    check: agent.check,
    compact: agent.compact,
    selectTools: agent.selectTools,
    alwaysOffer: agent.alwaysOffer,
    onNotice: run.onNotice ?? agent.onNotice,
    onEffect: run.onEffect ?? agent.onEffect,
  };
}

/**
 * An agent: its model, tools and options checked and built once, then run for each input. Tool
 * definitions get a fresh dispatcher per turn (grants remembered in one turn stay in it); a
 * dispatcher passed as `tools` serves every turn.
 *
 * @example
 * const agent = createAgent({ model, tools: [add], system: 'You are a calculator.' });
 * const result = await agent.run('What is 1 + 2?');
 */
export function createAgent(options: AgentOptions, handlers: EffectHandlers = defaultHandlers): Agent {
  checkCommon(options, 'createAgent');
  for (const key of ['input', 'transcript', 'signal', 'id', 'trace'] as const) {
    if ((options as RunTurnOptions)[key] !== undefined)
      throw new TypeError(`createAgent option \`${key}\` belongs to each run: pass it to agent.run(input, { ${key} }).`);
  }
  const agent = prepareAgent(options, 'createAgent');
  return {
    async run(input, runOptions = {}) {
      if (typeof input !== 'string') throw new TypeError('agent.run(input) needs the input as a string.');
      checkRunOptions(runOptions);
      return startTurn(agent, runOptions, input, handlers);
    },
    resume(resumeOptions) {
      return resumeTurn({ ...options, ...resumeOptions } as ResumeTurnOptions, handlers);
    },
  };
}

function checkRunOptions(options: AgentRunOptions): void {
  if (options === null || typeof options !== 'object')
    throw new TypeError('agent.run(input, options): options must be an object.');
  if (options.model !== undefined) checkCommon({ model: options.model }, 'agent.run');
  if (options.transcript !== undefined && !Array.isArray(options.transcript))
    throw new TypeError('agent.run option `transcript` must be an array of messages.');
}
