// Waiting under a turn's cancellation, without making an AbortSignal: racing work against it, and
// sleeping until a time or until it fires. No rejection is ever left unhandled.

import type { Cancellation } from './cancellation.js';

/**
 * Settles with `work`, or with `onAbort()` as soon as `cancel` aborts (at once when it already
 * has). The losing promise is left to finish on its own; its rejection is handled, so it cannot
 * surface as an unhandled rejection. A rejection of `work` before the abort rejects the race.
 *
 * @example
 * const event = await raceCancellation(model.call(request), cancel, () => null); // null: cancelled
 */
export function raceCancellation<T, A = T>(work: Promise<T>, cancel: Cancellation, onAbort: () => A): Promise<T | A> {
  if (cancel.aborted) {
    work.catch(() => undefined);
    return Promise.resolve(onAbort());
  }
  return new Promise<T | A>((resolve, reject) => {
    const remove = cancel.onAbort(() => resolve(onAbort()));
    work.then(
      (value) => {
        remove();
        resolve(value);
      },
      (error: unknown) => {
        remove();
        reject(error);
      },
    );
  });
}

/**
 * Waits `ms` milliseconds; `0` (or less) still waits one macrotask, so timers and I/O run between
 * two tries. Resolves `true` when the time passed, `false` when `cancel` fired first (at once when
 * it already had).
 */
export function sleep(ms: number, cancel: Cancellation): Promise<boolean> {
  return new Promise((resolve) => {
    if (cancel.aborted) return resolve(false);
    const remove = cancel.onAbort(() => {
      clearTimeout(timer);
      resolve(false);
    });
    const timer = setTimeout(
      () => {
        remove();
        resolve(true);
      },
      Math.max(0, ms),
    );
  });
}

/** What `raceUserCode` gives when the turn was cancelled first. */
export const CANCELLED: unique symbol = Symbol('cancelled');

/**
 * Runs user code (a hook, a policy) under the turn's cancellation: not at all when the turn is
 * already cancelled, and abandoned when it is cancelled meanwhile. A synchronous throw becomes a
 * rejection, so one `try` around the `await` catches both.
 */
export function raceUserCode<T>(run: () => T | PromiseLike<T>, cancel: Cancellation): Promise<T | typeof CANCELLED> {
  if (cancel.aborted) return Promise.resolve(CANCELLED);
  return raceCancellation(new Promise<T>((resolve) => resolve(run())), cancel, () => CANCELLED);
}
