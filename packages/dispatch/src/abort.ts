// Waiting under a turn's AbortSignal: racing work against it, and waiting out a retry's backoff.
// No rejection is ever left unhandled.

/** What `unlessAborted` gives when the turn was cancelled first. */
export const CANCELLED: unique symbol = Symbol('cancelled');

/**
 * Settles with `work`, or with `onAbort()` as soon as `signal` aborts (at once when it already
 * has). The losing promise is left to finish on its own; its rejection is handled, so it cannot
 * surface as an unhandled rejection. A rejection of `work` before the abort rejects the race.
 *
 * @example
 * const event = await raceAbort(model.generate(request, { signal }), signal, () => null); // null: cancelled
 */
export function raceAbort<T>(work: PromiseLike<T>, signal: AbortSignal, onAbort: () => T): Promise<T> {
  if (signal.aborted) {
    Promise.resolve(work).catch(() => undefined);
    return Promise.resolve(onAbort());
  }
  return new Promise<T>((resolve, reject) => {
    const abort = (): void => resolve(onAbort());
    signal.addEventListener('abort', abort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(error);
      },
    );
  });
}

/**
 * Runs user code (a hook, a policy, an execution wrapper) under the turn's signal: not at all when
 * the turn is already cancelled, and abandoned when it is cancelled meanwhile. A synchronous throw
 * becomes a rejection, so one `try` around the `await` catches both.
 */
export function unlessAborted<T>(run: () => T | PromiseLike<T>, signal: AbortSignal): Promise<T | typeof CANCELLED> {
  if (signal.aborted) return Promise.resolve(CANCELLED);
  return raceAbort<T | typeof CANCELLED>(new Promise<T>((resolve) => resolve(run())), signal, () => CANCELLED);
}

/**
 * Waits `ms` milliseconds (the global `setTimeout`, so fake timers control it); `0` still waits one
 * macrotask, so timers and I/O run between two tries. Resolves `true` when the time passed, `false`
 * when `signal` aborted first (at once when it already had).
 */
export function delay(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const abort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(
      () => {
        signal.removeEventListener('abort', abort);
        resolve(true);
      },
      Math.max(0, ms),
    );
    signal.addEventListener('abort', abort, { once: true });
  });
}
