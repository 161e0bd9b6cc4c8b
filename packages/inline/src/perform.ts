// Performing one blocking effect for the driver: starting its handler, waiting for it under the
// turn's cancellation, and the event for a handler that failed.

import { errorMessage, type BlockingEffect } from '@turnkit/core/internal';
import { toTurnError, type TurnEvent } from '@turnkit/core';
import { sleep, type Cancellation } from '@turnkit/dispatch';
import { reasonText } from './abort.js';
import { CompactFailedError } from './compaction.js';
import type { EffectHandlers, HandlerContext } from './driver.js';
import { CheckFailedError } from './output.js';

export type Performed = Exclude<BlockingEffect, { type: 'done' }>;
type EffectOf<T extends Performed['type']> = Extract<Performed, { type: T }>;

/**
 * Starts one blocking handler: its event, or a promise of it. A handler that throws at once
 * becomes its event; an already cancelled turn starts nothing (no model call or tool only to abort
 * it). A model call that core marked as a retry waits its `delayMs` first.
 */
export function startEffect(
  effect: Performed,
  ctx: HandlerContext,
  handlers: EffectHandlers,
  cancel: Cancellation,
): TurnEvent | PromiseLike<TurnEvent> {
  if (cancel.aborted) return cancelEvent(cancel);
  try {
    switch (effect.type) {
      case 'call_llm':
        return (effect.request.delayMs ?? 0) > 0
          ? retryAfterDelay(effect, ctx, handlers, cancel)
          : handlers.call_llm(effect, ctx);
      case 'dispatch_tools':
        return handlers.dispatch_tools(effect, ctx);
      case 'execute_approved':
        return handlers.execute_approved(effect, ctx);
      case 'compact':
        return handlers.compact(effect, ctx);
      case 'check_output':
        return handlers.check_output(effect, ctx);
    }
  } catch (error) {
    return handlerFailed(effect, error);
  }
}

async function retryAfterDelay(
  effect: EffectOf<'call_llm'>,
  ctx: HandlerContext,
  handlers: EffectHandlers,
  cancel: Cancellation,
): Promise<TurnEvent> {
  await sleep(effect.request.delayMs ?? 0, cancel);
  if (cancel.aborted) return cancelEvent(cancel);
  return handlers.call_llm(effect, ctx);
}

/**
 * Tool batches are not raced: on cancel the dispatcher settles at once by itself, with the real
 * results of finished calls and `cancelled` for the rest, and those results must reach core.
 */
export function isRaced(effect: Performed): boolean {
  return effect.type !== 'dispatch_tools' && effect.type !== 'execute_approved';
}

export function cancelEvent(cancel: Cancellation): TurnEvent {
  return { type: 'cancel', reason: reasonText(cancel.reason) };
}

/**
 * Races one handler at a time against the turn's cancellation: one listener for the whole turn
 * and one promise per wait, where a race per effect would add a listener, its removal and two
 * callbacks. A handler that loses keeps running; what it ends with is ignored.
 */
export class Waiter {
  readonly #cancel: Cancellation;
  #resolve: ((event: TurnEvent) => void) | undefined;
  #effect: Performed | undefined;
  #listening = false;
  readonly #settle = (event: TurnEvent): void => this.#resolve?.(event);
  readonly #fail = (error: unknown): void => {
    if (this.#effect !== undefined) this.#resolve?.(handlerFailed(this.#effect, error));
  };

  constructor(cancel: Cancellation) {
    this.#cancel = cancel;
  }

  wait(work: PromiseLike<TurnEvent>, effect: Performed): Promise<TurnEvent> {
    // Cancelled while the handler started (a model that aborts its own turn, say).
    if (this.#cancel.aborted) {
      work.then(undefined, ignore);
      return Promise.resolve(cancelEvent(this.#cancel));
    }
    if (!this.#listening) {
      this.#listening = true;
      this.#cancel.onAbort(() => this.#resolve?.(cancelEvent(this.#cancel)));
    }
    this.#effect = effect;
    const settled = new Promise<TurnEvent>((resolve) => {
      this.#resolve = resolve;
    });
    work.then(this.#settle, this.#fail);
    return settled;
  }
}

function ignore(): void {}

export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/**
 * The event for a handler that threw: the fault is reported to core, never rethrown. Core writes
 * whatever follows from it (a retry, error results for the calls in flight, a failed turn).
 */
export function handlerFailed(effect: Performed, error: unknown): TurnEvent {
  switch (effect.type) {
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
