// Cancellation helpers: an abort must become a `cancel` event at once, even while a model or a
// tool ignores its signal, and must never leave an unhandled rejection behind.

import type { Cancellation } from '@turnkit/dispatch';

/** The reason a signal gives, as a sentence for the `cancel` event. */
export function cancelReason(signal: AbortSignal): string {
  return reasonText(signal.reason);
}

/** A cancellation reason as a sentence for the `cancel` event. */
export function reasonText(reason: unknown): string {
  if (typeof reason === 'string' && reason.length > 0) return reason;
  if (reason instanceof Error && reason.name !== 'AbortError' && reason.message.length > 0) return reason.message;
  return 'cancelled by the caller';
}

/**
 * Settles with `work`, or with `onAbort()` as soon as `signal` aborts. The losing promise is
 * left to finish on its own; its rejection is swallowed so it cannot surface as unhandled.
 */
export function raceAbort<T>(work: Promise<T>, signal: AbortSignal, onAbort: () => T): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
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

/** `raceAbort` over a Cancellation: no AbortSignal is made and no EventTarget listener added. */
export function raceCancellation<T>(work: Promise<T>, cancel: Cancellation, onAbort: () => T): Promise<T> {
  if (cancel.aborted) {
    work.catch(() => undefined);
    return Promise.resolve(onAbort());
  }
  return new Promise<T>((resolve, reject) => {
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

/** Waits `ms`, ending early (without error) when `cancel` aborts. Makes no AbortSignal. */
export function sleep(ms: number, cancel: Cancellation): Promise<void> {
  if (!(ms > 0) || cancel.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      remove();
      resolve();
    };
    const timer = setTimeout(done, ms);
    const remove = cancel.onAbort(done);
  });
}
