// Observers (a notice or step callback, a telemetry hook, a listener) must not break what they
// observe: every interpreter calls them through the one helper below.

/**
 * Calls `observe`; whatever it throws is ignored.
 *
 * @example
 * quietly(() => options.onStep?.(record));
 */
export function quietly(observe: () => void): void {
  try {
    observe();
  } catch {
    // An observer that fails must not break the turn, the worker or the connection it observes.
  }
}
