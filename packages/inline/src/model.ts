// Calling the model: build the request with core's `buildModelRequest`, map a thrown error to a
// TurnError, retry retryable errors with backoff. Shared by every interpreter built on the driver.

import { buildModelRequest, type CallModelRequest, type Message, type Model, type ModelRequest, type ModelResponse, type ToolSpec, type TurnError, type TurnEvent } from '@turnkit/core';
import { sleep } from './abort.js';

const record = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object';

/**
 * The TurnError for anything a model call threw. An error carrying a `turnError` (as the ai-sdk
 * adapter throws) is used as is; otherwise the kind is `model_error`, the message is the error's,
 * and `retryable` is copied when the error says so with a boolean.
 */
export function toTurnError(error: unknown): TurnError {
  if (record(error) && isTurnError(error.turnError)) return error.turnError;
  const message = errorMessage(error);
  const retryable = record(error) && typeof error.retryable === 'boolean' ? error.retryable : undefined;
  return retryable === undefined ? { kind: 'model_error', message } : { kind: 'model_error', message, retryable };
}

function isTurnError(value: unknown): value is TurnError {
  return record(value) && typeof value.kind === 'string' && typeof value.message === 'string';
}

/** A readable message for any thrown value. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message.length > 0 ? error.message : error.name;
  if (record(error) && typeof error.message === 'string') return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

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
