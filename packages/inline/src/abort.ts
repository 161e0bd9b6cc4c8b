// The reason of a cancel, as the `cancel` event's sentence. (Racing work against a signal is
// `raceAbort` of @turnkit/dispatch.)

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
