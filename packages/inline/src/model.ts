// Calling the model: build the request with core's `buildModelRequest`, map a thrown error to a
// TurnError, retry retryable errors with backoff. Shared by every interpreter built on the driver.

import { buildModelRequest, errorMessage, toTurnError, type CallModelRequest, type Message, type Model, type ModelRequest, type ModelResponse, type ToolSpec, type TurnError, type TurnEvent } from '@turnkit/core';
import { sleep } from './abort.js';

const record = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object';

// One mapping of thrown errors for every interpreter: core's (re-exported here, as before).
export { errorMessage, toTurnError };

/** The request the model sees for a `call_model` effect (a copy of the transcript, so later appends do not show). */
export function modelRequestFor(request: CallModelRequest, transcript: readonly Message[], tools: readonly ToolSpec[]): ModelRequest {
  return buildModelRequest(request, transcript.slice(), tools);
}

export interface ModelCallSettings {
  readonly maxModelRetries: number;
  readonly modelRetryBackoffMs: number;
  readonly signal: AbortSignal;
}

/**
 * Runs `attempt` and retries errors marked `retryable` up to `maxModelRetries` times, waiting
 * `modelRetryBackoffMs * 2 ** (n - 1)` before retry n (longer if the provider sent Retry-After). Returns `model_responded` or `model_failed`;
 * never throws. `attempt` is how the response is obtained (generate, or a stream collected).
 */
export async function callWithRetries(attempt: () => Promise<ModelResponse>, settings: ModelCallSettings): Promise<TurnEvent> {
  for (let retry = 0; ; retry += 1) {
    try {
      const response = await attempt();
      return { type: 'model_responded', response };
    } catch (error) {
      const turnError = toTurnError(error);
      if (turnError.retryable !== true || retry >= settings.maxModelRetries || settings.signal.aborted) {
        return { type: 'model_failed', error: turnError };
      }
      await sleep(retryDelayMs(turnError, settings.modelRetryBackoffMs * 2 ** retry), settings.signal);
    }
  }
}

/** The longest wait a provider's Retry-After hint may ask for (longer hints are not honoured). */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * The wait before a retry: the exponential backoff, or longer when the error carries the
 * provider's hint `data.retryAfterMs` (the ai-sdk adapter reads it from Retry-After), capped at a minute.
 */
export function retryDelayMs(error: TurnError, backoffMs: number): number {
  const data = error.data;
  const hint = record(data) && !Array.isArray(data) ? data.retryAfterMs : undefined;
  if (typeof hint !== 'number' || !Number.isFinite(hint) || hint <= 0) return backoffMs;
  return Math.max(backoffMs, Math.min(hint, MAX_RETRY_AFTER_MS));
}
