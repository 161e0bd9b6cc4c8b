// An agent's part built once (its options checked, its tools' configuration and its limits), and
// one turn started from it: each run makes only what belongs to its turn (the state, the
// transcript, a dispatcher with its own grants and budget counts). `runTurn` is an agent prepared
// for one run.

import { randomUUID } from 'node:crypto';
import { createTurn, type TurnEvent } from '@turnkit/core';
import { layerLimits } from '@turnkit/core/internal';
import type { Dispatcher } from '@turnkit/dispatch';
import { agentDirectory, isMultiAgent, withAgentTools } from './agents.js';
import { drive } from './drive.js';
import type { DriveOptions, EffectHandlers, PreparedAgent } from './driver-types.js';
import { checkToolSelection, dispatcherMaker, startTranscript, withRetryOptions } from './options.js';
import type { AgentOptions, AgentRunOptions, RunTurnOptions, TurnResult } from './types.js';

/** Checks `options` and builds what every turn shares. Throws a TypeError naming the bad option. */
export function prepareAgent(given: AgentOptions, fn: string): PreparedAgent {
  const options = withAgentTools(given, fn);
  const agents = isMultiAgent(given) ? agentDirectory(given, fn) : undefined;
  const make = dispatcherMaker(options, fn);
  // The dispatcher made to check the options serves the first turn.
  let spare: Dispatcher | undefined = make();
  checkToolSelection(options, spare, fn);
  const limits = layerLimits([withRetryOptions(options.limits, options, fn)], spare.loopExemptTools());
  // createTurn checks the limits (a RangeError naming the limit) and fills in the defaults.
  const template = createTurn(limits === undefined ? { id: 'template' } : { id: 'template', limits });
  const dispatcher = (): Dispatcher => {
    const made = spare ?? make();
    spare = undefined;
    return made;
  };
  return { options, dispatcher, limits: template.limits, agents };
}

/** Starts one turn of a prepared agent on `input`: `run` carries the per-run options (those of `runTurn` among them). */
export function startTurn(
  agent: PreparedAgent,
  run: AgentRunOptions,
  input: string | undefined,
  handlers: EffectHandlers,
): Promise<TurnResult> {
  if (input !== undefined && typeof input !== 'string') throw new TypeError('runTurn option `input` must be a string.');
  const id = run.id ?? `turn_${randomUUID()}`;
  const name = agent.agents === undefined ? undefined : agent.options.name;
  const initial = createTurn(name === undefined ? { id, limits: agent.limits } : { id, limits: agent.limits, agent: name });
  const transcript = startTranscript(agent.options.system, run.transcript ?? []);
  const event: TurnEvent = input === undefined ? { type: 'start' } : { type: 'start', input };
  const options = run === agent.options ? (run as RunTurnOptions) : driveOptions(agent.options, run);
  return drive(options, agent.dispatcher(), transcript, initial, event, handlers, agent.agents);
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
