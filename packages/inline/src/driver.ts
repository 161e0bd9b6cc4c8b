// The driver: a loop over core's effects and a table from effect type to handler. It holds no turn
// logic: every decision is made by `step`; the driver performs effects and feeds back exactly one
// event per blocking effect (docs/turn-contract.md, "The interpreter's side"). Other interpreters (such as @turnkit/stream) reuse this
// loop and replace or extend single handlers: `{ ...defaultHandlers, call_model: streamingCall }`.
//
// This module is the entry point `@turnkit/inline/driver`: the kit for interpreter authors. It
// also re-exports the helpers the default handlers are made of.

import {
  cancelPreempts,
  dispatchOutcomeEvent,
  errorMessage,
  isBlocking,
  isTerminal,
  step,
  toTurnError,
  type BlockingEffect,
  type Effect,
  type Message,
  type Model,
  type Outcome,
  type ToolResult,
  type TurnEvent,
  type TurnState,
} from '@turnkit/core';
import {
  cancellationOf,
  raceCancellation,
  sleep,
  type Cancellation,
  type DispatchContext,
  type Dispatcher,
} from '@turnkit/dispatch';
import { reasonText } from './abort.js';
import { askApproval } from './approvals.js';
import { CompactFailedError, runCompaction } from './compaction.js';
import { modelRequestFor } from './model.js';
import { CheckFailedError, checkOutput } from './output.js';
import type { ApproveFn, CheckFn, CompactFn, OutputSchema, SelectToolsFn, StepRecord } from './types.js';

export { cancelReason, raceAbort } from './abort.js';
export { askApproval, isDecision, recordDecisions } from './approvals.js';
export { modelRequestFor } from './model.js';
export { checkOutput, parseOutput, CheckFailedError } from './output.js';

/** Everything a handler may use. `transcript` is live: the `append` handler pushes onto it. */
export interface HandlerContext {
  readonly turnId: string;
  readonly model: Model;
  readonly dispatcher: Dispatcher;
  readonly transcript: Message[];
  /** Aborts when the turn is cancelled; pass it to every model and tool call. */
  readonly signal: AbortSignal;
  /**
   * The same cancellation, readable without making the AbortSignal (`runTurn` makes the signal
   * only when someone reads `signal`: creating and aborting one costs microseconds per turn).
   */
  readonly cancellation?: Cancellation;
  readonly approve?: ApproveFn;
  readonly output?: OutputSchema;
  readonly check?: CheckFn;
  readonly compact?: CompactFn;
  /** Which tools each model call is offered (see `modelRequestFor`). */
  readonly selectTools?: SelectToolsFn;
  readonly alwaysOffer?: readonly string[];
  readonly onNotice?: (notice: Extract<Effect, { type: 'emit' }>['notice']) => void;
  readonly onEffect?: (effect: Effect) => void;
  readonly onStep?: (record: StepRecord) => void;
  /**
   * Sees each tool result as soon as its call is decided or its tool finishes (completion order),
   * before the batch reaches core: the driver passes it to the dispatcher as `onResult`.
   */
  readonly onToolResult?: (result: ToolResult) => void;
}

type EffectOf<T extends Effect['type']> = Extract<Effect, { type: T }>;

/**
 * The table from effect type to handler. Blocking handlers return the one event to feed back; a
 * blocking handler that throws becomes an event (see `handlerFailed`). `append` and `persist`
 * must not throw (a lost message or checkpoint cannot be papered over: the error propagates).
 */
export interface EffectHandlers {
  append(effect: EffectOf<'append'>, ctx: HandlerContext): void | Promise<void>;
  emit(effect: EffectOf<'emit'>, ctx: HandlerContext): void | Promise<void>;
  persist(effect: EffectOf<'persist'>, ctx: HandlerContext, state: TurnState): void | Promise<void>;
  call_model(effect: EffectOf<'call_model'>, ctx: HandlerContext): Promise<TurnEvent>;
  dispatch_tools(effect: EffectOf<'dispatch_tools'>, ctx: HandlerContext): Promise<TurnEvent>;
  execute_approved(effect: EffectOf<'execute_approved'>, ctx: HandlerContext): Promise<TurnEvent>;
  compact(effect: EffectOf<'compact'>, ctx: HandlerContext): Promise<TurnEvent>;
  check_output(effect: EffectOf<'check_output'>, ctx: HandlerContext): Promise<TurnEvent>;
  /** The turn is parked (no blocking effect): the event that decides it, or null to suspend. */
  parked(state: TurnState, ctx: HandlerContext): Promise<TurnEvent | null>;
}

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
  async call_model(effect, ctx) {
    const request = modelRequestFor(effect.request, ctx.transcript, ctx.dispatcher.toolSpecs(), ctx);
    return { type: 'model_responded', response: await ctx.model.generate(request, modelCallOptions(ctx)) };
  },
  async dispatch_tools(effect, ctx) {
    return dispatchOutcomeEvent(await ctx.dispatcher.dispatch(effect.calls, dispatchContext(ctx)));
  },
  async execute_approved(effect, ctx) {
    const results = await ctx.dispatcher.executeApproved(effect.calls, dispatchContext(ctx));
    return { type: 'approved_tools_completed', results };
  },
  async compact(effect, ctx) {
    if (ctx.compact === undefined) return { type: 'compacted' };
    const info = await runCompaction(ctx.compact, ctx.transcript, effect.info);
    return { type: 'compacted', info };
  },
  check_output(effect, ctx) {
    return checkOutput(effect.candidate, ctx.output, ctx.check);
  },
  async parked(state, ctx) {
    if (ctx.approve === undefined) return null;
    return askApproval(ctx.approve, state, ctx.dispatcher, () => turnCancellation(ctx).aborted);
  },
};

// One per context: an object literal with a getter is slow to make, and a turn makes several calls.
const callOptionsOf = new WeakMap<HandlerContext, { readonly signal: AbortSignal }>();
const dispatchContextOf = new WeakMap<HandlerContext, DispatchContext>();

/** `{ signal }` for a model call; the signal is made only if the model reads it. */
export function modelCallOptions(ctx: HandlerContext): { readonly signal: AbortSignal } {
  let options = callOptionsOf.get(ctx);
  if (options === undefined) {
    options = {
      get signal() {
        return ctx.signal;
      },
    };
    callOptionsOf.set(ctx, options);
  }
  return options;
}

/**
 * The dispatch context of a turn: its id, cancellation and `onToolResult` (as `onResult`); the
 * signal is made only if read.
 */
function dispatchContext(ctx: HandlerContext): DispatchContext {
  let made = dispatchContextOf.get(ctx);
  if (made === undefined) {
    // No spread: it would read the getter and make the signal.
    const cancellation = ctx.cancellation;
    const onResult = ctx.onToolResult;
    const base: DispatchContext =
      cancellation === undefined
        ? { turnId: ctx.turnId, signal: ctx.signal }
        : {
            turnId: ctx.turnId,
            get signal() {
              return ctx.signal;
            },
            cancellation,
          };
    made = onResult === undefined ? base : Object.defineProperty(base, 'onResult', { value: onResult, enumerable: true });
    dispatchContextOf.set(ctx, made);
  }
  return made;
}

/** The context's cancellation (its AbortSignal's when a handler built a context without one). */
function turnCancellation(ctx: HandlerContext): Cancellation {
  return cancellationOf(ctx) as Cancellation;
}

/** Where a drive ended: `outcome` is null when the turn is parked and nobody could decide (suspended). */
export interface DriveResult {
  readonly state: TurnState;
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
  const cancel = turnCancellation(ctx);
  for (;;) {
    let blocking: BlockingEffect | undefined;
    for (const effect of pending) {
      if (ctx.onEffect !== undefined) quietly(() => ctx.onEffect?.(effect));
      if (isBlocking(effect)) blocking = effect;
      else {
        // Await only a handler that returned a promise: the default ones are synchronous.
        const done = performObserver(effect, ctx, handlers, current);
        if (done !== undefined) await done;
      }
    }
    if (blocking?.type === 'done') return { state: current, outcome: blocking.outcome };
    if (isTerminal(current)) return { state: current, outcome: current.outcome };
    let event: TurnEvent | null;
    try {
      if (blocking !== undefined) event = await perform(blocking, ctx, handlers);
      else if (current.status === 'awaiting_approval')
        event = await raceCancellation(handlers.parked(current, ctx), cancel, () => null);
      else event = null; // nothing in flight (a resumed state with nothing to redo): hand it back as is
    } catch {
      // A `parked` handler that threw: fail closed, the undecided calls expire (or, if the turn
      // was cancelled meanwhile, the cancel below wins).
      event = { type: 'approval_expired' };
    }
    // A cancelled turn gets `cancel` instead of the event in hand, unless it carries tool results (core's rule).
    if (cancel.aborted && cancelPreempts(event)) event = { type: 'cancel', reason: reasonText(cancel.reason) };
    if (event === null) return { state: current, outcome: null };
    const [next, nextEffects] = step(current, event);
    if (ctx.onStep !== undefined) quietly(() => ctx.onStep?.({ event, state: next, effects: nextEffects }));
    current = next;
    pending = nextEffects;
  }
}

function performObserver(
  effect: EffectOf<'append' | 'emit' | 'persist'>,
  ctx: HandlerContext,
  handlers: EffectHandlers,
  state: TurnState,
): void | Promise<void> {
  switch (effect.type) {
    case 'append':
      return handlers.append(effect, ctx);
    case 'emit':
      return handlers.emit(effect, ctx);
    case 'persist':
      return handlers.persist(effect, ctx, state);
  }
}

/**
 * Runs one blocking handler (raced against cancellation, except tool batches); a thrown handler
 * becomes its event. A model call that core marked as a retry waits its `delayMs` first.
 */
async function perform(
  effect: Exclude<BlockingEffect, { type: 'done' }>,
  ctx: HandlerContext,
  handlers: EffectHandlers,
): Promise<TurnEvent> {
  const cancellation = turnCancellation(ctx);
  const cancel = (): TurnEvent => ({ type: 'cancel', reason: reasonText(cancellation.reason) });
  // Already cancelled: do not start a model call or a tool only to abort it.
  if (cancellation.aborted) return cancel();
  try {
    switch (effect.type) {
      case 'call_model': {
        const delayMs = effect.request.delayMs ?? 0;
        if (delayMs > 0) {
          await sleep(delayMs, cancellation);
          if (cancellation.aborted) return cancel();
        }
        return await raceCancellation(handlers.call_model(effect, ctx), cancellation, cancel);
      }
      // Not raced: on cancel the dispatcher settles at once by itself, with the real results of
      // finished calls and `cancelled` for the rest, and those results must reach core.
      case 'dispatch_tools':
        return await handlers.dispatch_tools(effect, ctx);
      case 'execute_approved':
        return await handlers.execute_approved(effect, ctx);
      case 'compact':
        return await raceCancellation(handlers.compact(effect, ctx), cancellation, cancel);
      case 'check_output':
        return await raceCancellation(handlers.check_output(effect, ctx), cancellation, cancel);
    }
  } catch (error) {
    return handlerFailed(effect, error);
  }
}

/**
 * The event for a handler that threw: the fault is reported to core, never rethrown. Core writes
 * whatever follows from it (a retry, error results for the calls in flight, a failed turn).
 */
function handlerFailed(effect: Exclude<BlockingEffect, { type: 'done' }>, error: unknown): TurnEvent {
  switch (effect.type) {
    case 'call_model':
      return { type: 'model_failed', error: toTurnError(error) };
    case 'dispatch_tools':
    case 'execute_approved':
      return {
        type: 'effect_failed',
        effect: effect.type,
        error: { kind: 'dispatch_failed', message: `The tool dispatcher failed: ${errorMessage(error)}.` },
      };
    case 'compact':
      return {
        type: 'effect_failed',
        effect: 'compact',
        error: {
          kind: 'compact_failed',
          message: error instanceof CompactFailedError ? error.message : `The compact step failed: ${errorMessage(error)}.`,
        },
      };
    case 'check_output':
      return {
        type: 'effect_failed',
        effect: 'check_output',
        error: {
          kind: 'check_failed',
          message: error instanceof CheckFailedError ? error.message : `The output check failed: ${errorMessage(error)}.`,
        },
      };
  }
}

/** Observers must not break a turn: what they throw is ignored. */
function quietly(run: () => void): void {
  try {
    run();
  } catch {
    // Deliberately ignored: see above.
  }
}
