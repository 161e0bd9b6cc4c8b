// runTurn / resumeTurn: set up a turn (state, transcript, dispatcher) and drive it (drive.ts).

import { parseTurnState, resume, type TurnEvent } from '@turnkit/core';
import { activeTurn, definedProps, verifySeal } from '@turnkit/core/internal';
import { agentDirectory, isMultiAgent, withAgentTools } from './agents.js';
import { drive, sealedParts } from './drive.js';
import { defaultHandlers } from './driver.js';
import type { EffectHandlers } from './driver-types.js';
import { checkCommon, checkToolSelection, dispatcherMaker, startTranscript, withRetryOptions } from './options.js';
import { prepareAgent, startTurn } from './prepare.js';
import type { AgentOptions, ResumeTurnOptions, RunTurnOptions, TurnResult } from './types.js';

/**
 * Runs one turn in-process: calls the model, runs tools through the dispatcher, and returns when
 * the turn stops, fails, is cancelled, or needs an approval nobody can give here (`suspended`).
 *
 * @example
 * const result = await runTurn({ model, tools: [add], input: 'What is 1 + 2?' });
 * console.log(result.status, result.text);
 */
export async function runTurn(options: RunTurnOptions, handlers: EffectHandlers = defaultHandlers): Promise<TurnResult> {
  checkCommon(options, 'runTurn');
  return startTurn(prepareAgent(options, 'runTurn'), options, options.input, handlers);
}

/**
 * Continues a suspended turn with decisions for its pending calls, also in another process after
 * `JSON.parse(JSON.stringify(result))`. Pass the same options as to `runTurn` (model, tools, …).
 *
 * @example
 * // `suspended` is what runTurn returned (status 'suspended'), or JSON.parse of it in another process.
 * const result = await resumeTurn({ ...suspended, model, tools, decisions: { call_1: { type: 'approve' } } });
 */
export async function resumeTurn(options: ResumeTurnOptions, handlers: EffectHandlers = defaultHandlers): Promise<TurnResult> {
  checkCommon(options, 'resumeTurn');
  if (!Array.isArray(options.transcript))
    throw new TypeError('resumeTurn needs the `transcript` of the suspended result (an array of messages).');
  if (options.sealSecret !== undefined)
    await verifySeal(
      sealedParts(options.state, options.transcript, options.grants, options.budgetUsage, options.childTranscripts),
      options.seal,
      options.sealSecret,
    );
  const saved = parseTurnState(options.state);
  // The retry options set the resumed turn's retry limits (validated with the rest of the state).
  const retryLimits = withRetryOptions(undefined, options, 'resumeTurn');
  const state = retryLimits === undefined ? saved : parseTurnState({ ...saved, limits: { ...saved.limits, ...retryLimits } });
  if (state.status === 'ready')
    throw new TypeError(`resumeTurn got turn '${state.id}' that never started; start it with runTurn.`);
  const scope = { turnId: state.id, ...definedProps({ session: options.session }) };
  // The agent's options (a spread suspended result's `output: null` is no schema, as in drive).
  const named = { ...options, output: options.output ?? undefined } as AgentOptions;
  const agents = isMultiAgent(named) ? agentDirectory(named, 'resumeTurn') : undefined;
  const dispatcher = dispatcherMaker(withAgentTools(named, 'resumeTurn'), 'resumeTurn')();
  for (const grant of options.grants ?? []) dispatcher.grant(grant, scope);
  checkToolSelection(options, dispatcher, 'resumeTurn');
  const transcript = startTranscript(options.system, options.transcript);
  const decisions = options.decisions ?? {};
  if (state.status === 'awaiting_approval') {
    const event: TurnEvent | null = Object.keys(decisions).length > 0 ? { type: 'approvals_decided', decisions } : null;
    return drive(options, dispatcher, transcript, state, event, handlers, agents);
  }
  // A turn waiting on a child: the decisions go to the parked child (core passes them down).
  if (state.status === 'delegating' && activeTurn(state).state.status === 'awaiting_approval') {
    const event: TurnEvent | null = Object.keys(decisions).length > 0 ? { type: 'approvals_decided', decisions } : null;
    return drive(options, dispatcher, transcript, state, event, handlers, agents);
  }
  // Any other persisted status: core re-issues what was in flight (tools are never re-run).
  const [resumed, effects] = resume(state);
  return drive(options, dispatcher, transcript, resumed, effects, handlers, agents);
}
