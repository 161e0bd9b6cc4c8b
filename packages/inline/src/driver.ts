// The driver: a loop over core's effects and a table from effect type to handler. It holds no turn
// logic: every decision is made by `step`; the driver performs effects and feeds back exactly one
// event per blocking effect (docs/turn-contract.md, "The interpreter's side"). Other interpreters (such as @turnkit/stream) reuse this
// loop and replace or extend single handlers: `{ ...defaultHandlers, call_llm: streamingCall }`.
//
// This module is the entry point `@turnkit/inline/driver`: the kit for interpreter authors. It
// also re-exports the helpers the default handlers are made of.

import {
  cancelPreempts,
  dispatchOutcomeEvent,
  isBlocking,
  isTerminal,
  step,
  type CallRecord,
  type Effect,
  type Message,
  type Model,
  type ModelResponse,
  type Outcome,
  type ToolResult,
  type TurnEvent,
  type TurnState,
} from '@turnkit/core';
import { definedProps, type BlockingEffect, type JsonObject } from '@turnkit/core/internal';
import { cancellationOf, raceCancellation, type Cancellation, type DispatchContext, type Dispatcher } from '@turnkit/dispatch';
import { askApproval, recordCancelled, recordTaken } from './approvals.js';
import { runCompaction } from './compaction.js';
import { modelRequestFor } from './model.js';
import { checkOutput, readOutput } from './output.js';
import { turnContextOf } from './context.js';
import { cancelEvent, handlerFailed, isRaced, isThenable, startEffect, Waiter } from './perform.js';
import type { ApprovalDecision } from '@turnkit/core';
import type { ApproveFn, CheckFn, CompactFn, OutputSchema, SelectToolsFn, StepRecord, UndecidedPolicy } from './types.js';

export { cancelReason, raceAbort } from './abort.js';
export { askApproval, isDecision, recordCancelled, recordTaken } from './approvals.js';
export type { AskOptions } from './approvals.js';
export { modelRequestFor } from './model.js';
export { mergeExempt } from './run.js';
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
  /** What a parked call `approve` leaves out gets (default `'expire'`). */
  readonly whenUndecided?: UndecidedPolicy;
  /** Decisions known up front, by call id (passed to the dispatcher as `decisions`). */
  readonly decisions?: Readonly<Record<string, ApprovalDecision>>;
  /** The session a person's grants belong to (passed to the dispatcher as `session`). */
  readonly session?: string;
  readonly output?: OutputSchema;
  readonly check?: CheckFn;
  readonly compact?: CompactFn;
  /** Which tools each model call is offered (see `modelRequestFor`). */
  readonly selectTools?: SelectToolsFn;
  readonly alwaysOffer?: readonly string[];
  /** The caller's context (session, user, working directory, …), handed to hooks, policies and records. */
  readonly context?: JsonObject;
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
 * The table from effect type to handler. Blocking handlers return the one event to feed back (or a
 * promise of it; returning the event itself saves a promise when there is nothing to wait for); a
 * blocking handler that throws or rejects becomes an event (see `handlerFailed`). `append` and `persist`
 * must not throw (a lost message or checkpoint cannot be papered over: the error propagates).
 */
export interface EffectHandlers {
  append(effect: EffectOf<'append'>, ctx: HandlerContext): void | Promise<void>;
  emit(effect: EffectOf<'emit'>, ctx: HandlerContext): void | Promise<void>;
  persist(effect: EffectOf<'persist'>, ctx: HandlerContext, state: TurnState): void | Promise<void>;
  call_llm(effect: EffectOf<'call_llm'>, ctx: HandlerContext): TurnEvent | Promise<TurnEvent>;
  dispatch_tools(effect: EffectOf<'dispatch_tools'>, ctx: HandlerContext): TurnEvent | Promise<TurnEvent>;
  execute_approved(effect: EffectOf<'execute_approved'>, ctx: HandlerContext): TurnEvent | Promise<TurnEvent>;
  compact(effect: EffectOf<'compact'>, ctx: HandlerContext): TurnEvent | Promise<TurnEvent>;
  check_output(effect: EffectOf<'check_output'>, ctx: HandlerContext): TurnEvent | Promise<TurnEvent>;
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
  call_llm(effect, ctx) {
    const request = modelRequestFor(effect.request, ctx.transcript, ctx.dispatcher.toolSpecs(), ctx);
    const response = ctx.model.generate(request, modelCallOptions(ctx));
    return isThenable(response) ? response.then(modelResponded) : modelResponded(response);
  },
  // The batch's audit records ride on the event, so the trace keeps them (and core sees hook_blocked).
  dispatch_tools(effect, ctx) {
    const records: CallRecord[] = [];
    return ctx.dispatcher
      .dispatch(effect.calls, recording(ctx, records))
      .then((outcome) => dispatchOutcomeEvent(outcome, records));
  },
  execute_approved(effect, ctx) {
    const records: CallRecord[] = [];
    return ctx.dispatcher
      .executeApproved(effect.calls, recording(ctx, records))
      .then(
        (results): TurnEvent => ({ type: 'approved_tools_completed', results, ...(records.length === 0 ? {} : { records }) }),
      );
  },
  compact(effect, ctx) {
    if (ctx.compact === undefined) return { type: 'compacted' };
    return runCompaction(ctx.compact, ctx.transcript, effect.info).then(compacted);
  },
  check_output(effect, ctx) {
    if (ctx.check === undefined) return readOutput(effect.candidate, ctx.output);
    return checkOutput(effect.candidate, ctx.output, ctx.check);
  },
  async parked(state, ctx) {
    if (ctx.approve === undefined) return null;
    return askApproval(ctx.approve, state, ctx.dispatcher, () => turnCancellation(ctx).aborted, {
      scope: dispatchContext(ctx),
      awaiting: awaitingOf(ctx),
      ...definedProps({ whenUndecided: ctx.whenUndecided }),
    });
  },
};

// One per context: an object literal with a getter is slow to make, and a turn makes several calls.
const callOptionsOf = new WeakMap<HandlerContext, { readonly signal: AbortSignal }>();
const dispatchContextOf = new WeakMap<HandlerContext, DispatchContext>();
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

/** `{ signal }` for a model call; the signal is made only if the model reads it. */
export function modelCallOptions(ctx: HandlerContext): { readonly signal: AbortSignal } {
  const own = turnContextOf(ctx);
  if (own !== undefined) return own.callOptions();
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
 * The dispatch context of a turn: its id, cancellation, `onToolResult` (as `onResult`), session,
 * up-front decisions, the caller's `context` and the transcript (hooks and policies see a frozen
 * copy); the signal is made only if read.
 */
export function dispatchContext(ctx: HandlerContext): DispatchContext {
  const own = turnContextOf(ctx);
  if (own !== undefined) return own.dispatchContext();
  let made = dispatchContextOf.get(ctx);
  if (made === undefined) {
    // No spread: it would read the getter and make the signal.
    const cancellation = ctx.cancellation;
    const shared = { turnId: ctx.turnId, transcript: ctx.transcript, ...definedProps({ context: ctx.context }) };
    const base: DispatchContext =
      cancellation === undefined
        ? { ...shared, signal: ctx.signal }
        : {
            ...shared,
            get signal() {
              return ctx.signal;
            },
            cancellation,
          };
    for (const [key, value] of [
      ['onResult', ctx.onToolResult],
      ['session', ctx.session],
      ['decisions', ctx.decisions],
    ] as const)
      if (value !== undefined) Object.defineProperty(base, key, { value, enumerable: true });
    made = base;
    dispatchContextOf.set(ctx, made);
  }
  return made;
}

/** The turn's dispatch context, for one batch, with its audit records going into `records`. */
function recording(ctx: HandlerContext, records: CallRecord[]): DispatchContext {
  const own = turnContextOf(ctx);
  if (own !== undefined) return own.batchContext(records);
  return Object.create(dispatchContext(ctx), {
    onRecord: { value: (record: CallRecord) => records.push(record), enumerable: true },
  }) as DispatchContext;
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
  // A turn nobody can cancel while it runs (runTurn without a signal) waits on its handlers directly.
  const waiter = turnContextOf(ctx)?.cancellable === false ? undefined : new Waiter(cancel);
  for (;;) {
    let blocking: BlockingEffect | undefined;
    for (let i = 0; i < pending.length; i++) {
      const effect = pending[i] as Effect;
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
    if (blocking !== undefined) {
      const started = startEffect(blocking, ctx, handlers, cancel);
      if (isThenable(started)) {
        try {
          event = await (waiter !== undefined && isRaced(blocking) ? waiter.wait(started, blocking) : started);
        } catch (error) {
          event = handlerFailed(blocking, error);
        }
      } else event = started;
    } else if (current.status === 'awaiting_approval') {
      try {
        event = await raceCancellation(handlers.parked(current, ctx), cancel, () => null);
      } catch {
        // A `parked` handler that threw: fail closed, the undecided calls expire (or, if the turn
        // was cancelled meanwhile, the cancel below wins).
        event = { type: 'approval_expired' };
      }
    } else event = null; // nothing in flight (a resumed state with nothing to redo): hand it back as is
    // A cancelled turn gets `cancel` instead of the event in hand, unless it carries tool results (core's rule).
    if (cancel.aborted && cancelPreempts(event)) event = cancelEvent(cancel);
    if (event === null) return { state: current, outcome: null };
    // Parked calls a cancel ends get their final decision record (approved ones only if they never ran).
    if (
      (event.type === 'cancel' || event.type === 'cancel_batch') &&
      (current.status === 'awaiting_approval' || current.status === 'executing_approved')
    )
      recordCancelled(ctx.dispatcher, current, dispatchContext(ctx), event.reason);
    const stepped = step(current, event);
    // The dispatcher records the decisions core took (audit records, approve-and-remember grants).
    if (event.type === 'approvals_decided' || event.type === 'approval_expired')
      recordTaken(ctx.dispatcher, current, event, dispatchContext(ctx));
    current = stepped[0];
    pending = stepped[1];
    if (ctx.onStep !== undefined) {
      const record = { event, state: current, effects: pending };
      quietly(() => ctx.onStep?.(record));
    }
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

const modelResponded = (response: ModelResponse): TurnEvent => ({ type: 'model_responded', response });
const compacted = (info: { before: number; after: number }): TurnEvent => ({ type: 'compacted', info });

/** Observers must not break a turn: what they throw is ignored. */
function quietly(run: () => void): void {
  try {
    run();
  } catch {
    // Deliberately ignored: see above.
  }
}
