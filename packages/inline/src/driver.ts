// The driver: a loop over core's effects and a table from effect type to handler. It holds no turn
// logic: every decision is made by `step`; the driver performs effects and feeds back exactly one
// event per blocking effect (docs/turn-contract.md, "The interpreter's side"). Other interpreters (such as @turnkit/stream) reuse this
// loop and replace or extend single handlers: `{ ...defaultHandlers, call_llm: streamingCall }`.
//
// This module is the entry point `@turnkit/inline/driver`: the kit for interpreter authors (the
// loop, the handler table, its context, and the model request every handler builds). The helpers
// the default handlers are made of stay private to inline: wrap a default handler instead.

import {
  cancelPreempts,
  dispatchOutcomeEvent,
  isBlocking,
  isTerminal,
  step,
  type CallRecord,
  type Effect,
  type Outcome,
  type TurnEvent,
  type TurnState,
} from '@turnkit/core';
import { activeTurn, definedProps, quietly, type BlockingEffect } from '@turnkit/core/internal';
import { askApproval, recordCancelled, recordTaken } from './approvals.js';
import { childContext, contextAt } from './agents.js';
import { runCompaction } from './compaction.js';
import type { EffectHandlers, HandlerContext } from './driver-types.js';
import { modelRequestFor } from './model.js';
import { checkOutput, readOutput } from './output.js';
import { cancelEvent, performEffect } from './perform.js';

import { raceAbort, type DispatchContext } from '@turnkit/dispatch/internal';
export type { EffectHandlers, HandlerContext } from './driver-types.js';
export { modelRequestFor } from './model.js';
export { handlerFailed } from './perform.js';

/** The handlers `runTurn` uses. */
export const defaultHandlers: EffectHandlers = {
  append(effect, ctx) {
    ctx.transcript.push(effect.message);
  },
  emit(effect, ctx) {
    quietly(() => ctx.onNotice?.(effect.notice));
  },
  persist() {
    // Nothing to do in-process: a caller who persists watches `onEffect` for `persist`.
  },
  // A model that throws becomes `model_failed` (see `handlerFailed`); core decides on a retry.
  // A broken selectTools throws a ToolSelectionError: model_failed (tool_selection_failed, not retried).
  async call_llm(effect, ctx) {
    const request = modelRequestFor(effect.request, ctx.transcript, ctx.dispatcher.toolSpecs(), ctx);
    const response = await ctx.model.generate(request, { signal: ctx.signal });
    return { type: 'model_responded', response };
  },
  // The batch's audit records ride on the event, so the trace keeps them (and core sees hook_blocked).
  async dispatch_tools(effect, ctx) {
    const records: CallRecord[] = [];
    const outcome = await ctx.dispatcher.dispatch(effect.calls, dispatchContext(ctx, records));
    return dispatchOutcomeEvent(outcome, records);
  },
  async execute_approved(effect, ctx) {
    const records: CallRecord[] = [];
    const results = await ctx.dispatcher.executeApproved(effect.calls, dispatchContext(ctx, records));
    return { type: 'approved_tools_completed', results, ...(records.length === 0 ? {} : { records }) };
  },
  async compact(effect, ctx) {
    if (ctx.compact === undefined) return { type: 'compacted' };
    return { type: 'compacted', info: await runCompaction(ctx.compact, ctx.transcript, effect.info) };
  },
  async check_output(effect, ctx) {
    if (ctx.check === undefined) return readOutput(effect.candidate, ctx.output);
    return checkOutput(effect.candidate, ctx.output, ctx.check);
  },
  async parked(state, ctx) {
    if (ctx.approve === undefined) return null;
    return askApproval(ctx.approve, state, () => ctx.signal.aborted, {
      scope: dispatchContext(ctx),
      awaiting: awaitingOf(ctx),
      ...definedProps({ whenUndecided: ctx.whenUndecided, agentPath: ctx.agentPath }),
    });
  },
};

// The calls the approve callback said to await, per turn run: they are not asked about again.
const awaitingByContext = new WeakMap<HandlerContext, Set<string>>();

function awaitingOf(ctx: HandlerContext): Set<string> {
  let set = awaitingByContext.get(ctx);
  if (set === undefined) {
    set = new Set();
    awaitingByContext.set(ctx, set);
  }
  return set;
}

/**
 * The dispatch context of a turn: its id, signal, `onToolResult` (as `onResult`), session,
 * up-front decisions, the caller's `context` and the transcript (hooks and policies see a frozen
 * copy); with `records`, the batch's audit records go into it.
 */
function dispatchContext(ctx: HandlerContext, records?: CallRecord[]): DispatchContext {
  return {
    turnId: ctx.turnId,
    signal: ctx.signal,
    transcript: ctx.transcript,
    ...definedProps({
      context: ctx.context,
      onResult: ctx.onToolResult,
      session: ctx.session,
      decisions: ctx.decisions,
      onRecord: records === undefined ? undefined : (record: CallRecord) => void records.push(record),
    }),
  };
}

/** Where a drive ended: `outcome` is null when the turn is parked and nobody could decide (suspended). */
export interface DriveResult {
  /** The turn's state where the drive ended. */
  readonly state: TurnState;
  /** How the turn ended, or null when it is suspended. */
  readonly outcome: Outcome | null;
}

/**
 * Performs `effects` (the output of the step that produced `state`) and keeps stepping until the
 * turn is done or parked without a decision. Never throws for a fault of a model, tool or
 * callback: those become events (`model_failed`, error tool results, `effect_failed`).
 */
export async function driveTurn(
  state: TurnState,
  effects: readonly Effect[],
  ctx: HandlerContext,
  handlers: EffectHandlers = defaultHandlers,
): Promise<DriveResult> {
  let current = state;
  let pending = effects;
  const { signal } = ctx;
  for (;;) {
    let blocking: BlockingEffect | undefined;
    for (const effect of pending) {
      if (ctx.onEffect !== undefined) quietly(() => ctx.onEffect?.(effect));
      if (isBlocking(effect)) blocking = effect;
      else {
        const observed = performObserver(effect, ctx, handlers, current);
        if (observed !== undefined) await observed;
      }
    }
    if (blocking?.type === 'done') return { state: current, outcome: blocking.outcome };
    if (isTerminal(current)) return { state: current, outcome: current.outcome };
    // The turn that acts now: this one, or, while it waits on a child turn, that child (agents.ts).
    const active = activeTurn(current);
    const actx = active.state === current ? ctx : contextAt(ctx, active, current);
    let event: TurnEvent | null;
    if (blocking !== undefined) event = await performEffect(blocking, ctx, handlers);
    else if (active.state.status === 'awaiting_approval') {
      try {
        event = await raceAbort(handlers.parked(active.state, actx), signal, () => null);
      } catch {
        // A `parked` handler that threw: fail closed, the undecided calls expire (or, if the turn
        // was cancelled meanwhile, the cancel below wins).
        event = { type: 'approval_expired' };
      }
    } else event = null; // nothing in flight (a resumed state with nothing to redo): hand it back as is
    // A cancelled turn gets `cancel` instead of the event in hand, unless it carries tool results (core's rule).
    if (signal.aborted && cancelPreempts(unwrapped(event))) event = cancelEvent(signal);
    if (event === null) return { state: current, outcome: null };
    // Parked calls a cancel ends get their final decision record (approved ones only if they never ran).
    if (
      (event.type === 'cancel' || event.type === 'cancel_batch') &&
      (active.state.status === 'awaiting_approval' || active.state.status === 'executing_approved')
    )
      recordCancelled(actx.dispatcher, active.state, dispatchContext(actx), event.reason);
    const stepped = step(current, event);
    // The dispatcher records the decisions core took (audit records, approve-and-remember grants),
    // the dispatcher of the turn where the calls are parked.
    if (event.type === 'approvals_decided' || event.type === 'approval_expired')
      recordTaken(actx.dispatcher, active.state, event, dispatchContext(actx));
    current = stepped[0];
    pending = stepped[1];
    if (ctx.onStep !== undefined) {
      const record = { event, state: current, effects: pending };
      quietly(() => ctx.onStep?.(record));
    }
  }
}

function performObserver(effect: Effect, ctx: HandlerContext, handlers: EffectHandlers, state: TurnState): void | Promise<void> {
  switch (effect.type) {
    case 'append':
      return handlers.append(effect, ctx);
    case 'emit':
      return handlers.emit(effect, ctx);
    case 'persist':
      // A child's checkpoint is the tree's: the state saved is the root's, which holds the child.
      return handlers.persist(effect, ctx, state);
    // A child turn's effect, in the child's context; its `done` is news (core has answered its call).
    case 'child':
      return performObserver(effect.effect, childContext(ctx, effect.callId, effect.agent), handlers, state);
    default:
      return undefined;
  }
}

/** The event a child turn's answer carries, as cancel pre-emption reads it. */
function unwrapped(event: TurnEvent | null): TurnEvent | null {
  return event?.type === 'child' ? unwrapped(event.event) : event;
}
