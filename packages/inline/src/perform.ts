// Performing one blocking effect for the driver: its handler, raced against the turn's signal
// where a cancel must not wait for it, and the event for a handler that failed.

import { setTimeout as wait } from 'node:timers/promises';
import { raceAbort } from '@turnkit/dispatch/internal';
import { toTurnError, type TurnEvent } from '@turnkit/core';
import { errorMessage, type BlockingEffect } from '@turnkit/core/internal';
import { reasonText } from './abort.js';
import { childContext, contextFor } from './agents.js';
import { CompactFailedError } from './compaction.js';
import type { EffectHandlers, HandlerContext } from './driver-types.js';
import { CheckFailedError } from './output.js';

export type Performed = Exclude<BlockingEffect, { type: 'done' }>;

/**
 * The event for one blocking effect. An already cancelled turn starts nothing (no model call or
 * tool only to abort it); a model call that core marked as a retry waits its `delayMs` first. A
 * handler that throws or rejects becomes its event (`handlerFailed`). Tool batches are not raced:
 * on cancel the dispatcher settles at once by itself, with the real results of finished calls and
 * `cancelled` for the rest, and those results must reach core. Every other handler is: a cancel
 * becomes the `cancel` event at once, and a handler that lost keeps running, what it ends with
 * ignored.
 */
export function performEffect(effect: Performed, ctx: HandlerContext, handlers: EffectHandlers): Promise<TurnEvent> {
  const { signal } = ctx;
  if (signal.aborted) return Promise.resolve(cancelEvent(signal));
  let performed: PromiseLike<TurnEvent>;
  try {
    performed = perform(effect, ctx, handlers);
  } catch (error) {
    return Promise.resolve(handlerFailed(effect, error));
  }
  return Promise.resolve(performed).then(undefined, (error: unknown) => handlerFailed(effect, error));
}

/** The handler's promise for `effect`, raced against the turn's signal where a cancel must not wait for it. May throw. */
function perform(effect: Performed, given: HandlerContext, handlers: EffectHandlers): PromiseLike<TurnEvent> {
  const { signal } = given;
  const cancelled = (): TurnEvent => cancelEvent(signal);
  // After a handoff core names the active agent: its model and tools perform the effect.
  const ctx =
    effect.type === 'call_llm' || effect.type === 'dispatch_tools' || effect.type === 'execute_approved'
      ? contextFor(given, effect.agent)
      : given;
  switch (effect.type) {
    case 'child':
      return performChild(effect, ctx, handlers);
    case 'dispatch_tools':
      return handlers.dispatch_tools(effect, ctx);
    case 'execute_approved':
      return handlers.execute_approved(effect, ctx);
    case 'call_llm': {
      // A model call that core marked as a retry waits its delay first.
      const delayMs = effect.request.delayMs ?? 0;
      const called = delayMs > 0 ? callModelAfter(delayMs, effect, ctx, handlers) : handlers.call_llm(effect, ctx);
      return raceAbort(called, signal, cancelled);
    }
    case 'compact':
      return raceAbort(handlers.compact(effect, ctx), signal, cancelled);
    case 'check_output':
      return raceAbort(handlers.check_output(effect, ctx), signal, cancelled);
  }
}

/** A child turn's blocking effect, performed in the child's context; its event goes back wrapped. */
async function performChild(
  effect: Extract<Performed, { type: 'child' }>,
  ctx: HandlerContext,
  handlers: EffectHandlers,
): Promise<TurnEvent> {
  const inner = childContext(ctx, effect.callId, effect.agent);
  const event = await performEffect(effect.effect as Performed, inner, handlers);
  return { type: 'child', callId: effect.callId, event };
}

async function callModelAfter(
  delayMs: number,
  effect: Extract<Performed, { type: 'call_llm' }>,
  ctx: HandlerContext,
  handlers: EffectHandlers,
): Promise<TurnEvent> {
  try {
    if (handlers.retryWait === undefined) await wait(delayMs, undefined, { signal: ctx.signal });
    else await handlers.retryWait(delayMs, ctx);
  } catch {
    return cancelEvent(ctx.signal);
  }
  // A wait of the interpreter's own may end early on a cancel it took (it aborts the turn's signal).
  if (ctx.signal.aborted) return cancelEvent(ctx.signal);
  return handlers.call_llm(effect, ctx);
}

export function cancelEvent(signal: AbortSignal): TurnEvent {
  return { type: 'cancel', reason: reasonText(signal.reason) };
}

/**
 * The event for a handler that threw: the fault is reported to core, never rethrown. Core writes
 * whatever follows from it (a retry, error results for the calls in flight, a failed turn).
 */
export function handlerFailed(effect: Performed, error: unknown): TurnEvent {
  switch (effect.type) {
    case 'child':
      return { type: 'child', callId: effect.callId, event: handlerFailed(effect.effect as Performed, error) };
    case 'call_llm':
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
