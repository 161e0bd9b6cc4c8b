// Cancellation helpers: an abort must become a `cancel` event at once, even while a model or a
// tool ignores its signal, and must never leave an unhandled rejection behind.

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
