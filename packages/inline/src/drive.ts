// Driving one turn in-process: the handler context (the model, the dispatcher, the transcript, the
// turn's AbortSignal following the caller's), the driver, and the result shaped from where it ended.

import { step, undecided, type Effect, type JsonValue, type Message, type TurnEvent, type TurnState } from '@turnkit/core';
import { activeTurn, definedProps, sealParts } from '@turnkit/core/internal';
import type { Dispatcher } from '@turnkit/dispatch';
import type { GrantScope } from '@turnkit/dispatch/internal';
import { recordTaken } from './approvals.js';
import { childTranscripts, contextAt } from './agents.js';
import type { AgentDirectory, DriveOptions, EffectHandlers, HandlerContext } from './driver-types.js';
import { driveTurn } from './driver.js';
import type { StepRecord, TurnResult } from './types.js';

/**
 * Drives a turn from `state`: `first` is the event to step it with first (null: none), or the
 * effects to perform first (a resumed turn's). The turn's signal follows `options.signal` and
 * aborts when the turn ends, stopping anything a handler left running (a model that lost a race
 * with the cancel, say).
 */
export async function drive(
  options: DriveOptions,
  dispatcher: Dispatcher,
  transcript: Message[],
  state: TurnState,
  first: TurnEvent | null | readonly Effect[],
  handlers: EffectHandlers,
  agents?: AgentDirectory,
): Promise<TurnResult> {
  const outer = options.signal;
  const controller = new AbortController();
  const forward = (): void => controller.abort(outer?.reason);
  if (outer?.aborted === true) forward();
  else outer?.addEventListener('abort', forward, { once: true });

  const entries: StepRecord[] = [];
  const onStep =
    options.trace === true
      ? (record: StepRecord): void => {
          entries.push(record);
          options.onStep?.(record);
        }
      : options.onStep;
  const ctx: HandlerContext = {
    turnId: state.id,
    model: options.model,
    dispatcher,
    transcript,
    signal: controller.signal,
    approve: options.approve,
    whenUndecided: options.whenUndecided,
    // Up front only for a new turn: a resumed turn's options carry its saved `state`, and their
    // decisions are for its pending calls.
    decisions: 'state' in options ? undefined : options.decisions,
    session: options.session,
    context: options.context,
    // null is what a spread suspended result carries in `output`: no schema.
    output: options.output ?? undefined,
    check: options.check,
    compact: options.compact,
    selectTools: options.selectTools,
    alwaysOffer: options.alwaysOffer,
    onNotice: options.onNotice,
    onEffect: options.onEffect,
    onStep,
    agents,
    agentPath: state.agents === null ? undefined : [state.agents.agent],
    childTranscripts: (options as { childTranscripts?: HandlerContext['childTranscripts'] }).childTranscripts,
  };
  const scope = { turnId: state.id, ...definedProps({ session: options.session }) };

  let start: TurnState = state;
  let effects: readonly Effect[] = [];
  if (Array.isArray(first)) effects = first as readonly Effect[];
  else if (first !== null) {
    const event = first as TurnEvent;
    [start, effects] = step(state, event);
    // A decision for a child's parked call is recorded by the child's dispatcher, in its turn.
    const active = activeTurn(state);
    if (active.state === state) recordTaken(dispatcher, state, event, scope);
    else {
      const actx = contextAt(ctx, active, state);
      recordTaken(actx.dispatcher, active.state, event, { turnId: actx.turnId, ...definedProps({ session: options.session }) });
    }
    try {
      onStep?.({ event, state: start, effects });
    } catch {
      // Observers must not break a turn (as in the driver).
    }
  }
  try {
    const { state: end, outcome } = await driveTurn(start, effects, ctx, handlers);
    const result = toResult(
      end,
      outcome,
      transcript,
      dispatcher,
      scope,
      options.trace === true ? { initial: state, entries } : undefined,
      outcome === null && end.status === 'delegating' ? childTranscripts(ctx, end) : undefined,
    );
    return options.sealSecret === undefined ? result : await sealResult(result, options.sealSecret);
  } finally {
    outer?.removeEventListener('abort', forward);
    controller.abort('the turn has ended');
  }
}

function toResult(
  state: TurnState,
  outcome: TurnState['outcome'],
  transcript: readonly Message[],
  dispatcher: Dispatcher,
  scope: GrantScope,
  trace: TurnResult['trace'],
  children?: Record<string, readonly Message[]>,
): TurnResult {
  let last: Message | undefined;
  for (let i = transcript.length - 1; i >= 0 && last === undefined; i--)
    if (transcript[i]?.role === 'assistant') last = transcript[i];
  const text = last?.role === 'assistant' ? last.content : '';
  const { usage } = state;
  // Each result written out whole: spreading a shared base into each was 5% of a turn's profile.
  let result: TurnResult;
  if (outcome === null) {
    result = {
      text,
      usage,
      state,
      transcript,
      status: 'suspended',
      output: null,
      pending: undecided(state),
      grants: [...dispatcher.grants(scope)],
      budgetUsage: dispatcher.budgetUsage(),
      ...definedProps({ childTranscripts: children }),
    };
  } else if (outcome.status === 'stopped')
    result = {
      text,
      usage,
      state,
      transcript,
      status: 'stopped',
      output: outcome.output,
      stopReason: outcome.stopReason,
      outcome,
    };
  else if (outcome.status === 'failed')
    result = { text, usage, state, transcript, status: 'failed', output: null, error: outcome.error, outcome };
  else result = { text, usage, state, transcript, status: 'cancelled', output: null, reason: outcome.reason, outcome };
  return trace === undefined ? result : { ...result, trace };
}

/** What a seal covers: everything of a suspended result that a resume trusts. */
export function sealedParts(
  state: unknown,
  transcript: unknown,
  grants: unknown,
  budgetUsage: unknown,
  childTranscripts?: unknown,
): JsonValue {
  const parts = { state, transcript, grants: grants ?? [], budgetUsage: budgetUsage ?? null };
  // Child turns' transcripts are covered when a multi-agent result has them (others seal as before).
  return JSON.parse(JSON.stringify(childTranscripts === undefined ? parts : { ...parts, childTranscripts })) as JsonValue;
}

/** A suspended result with its seal; other results as they are. */
async function sealResult(result: TurnResult, secret: string | Uint8Array): Promise<TurnResult> {
  if (result.status !== 'suspended') return result;
  const seal = await sealParts(
    sealedParts(result.state, result.transcript, result.grants, result.budgetUsage, result.childTranscripts),
    secret,
  );
  return { ...result, seal };
}
