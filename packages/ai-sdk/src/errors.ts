// Turning whatever a provider throws into a TurnError. The AI SDK already classifies provider
// failures (APICallError with the provider's own `isRetryable`), so this file only reads those
// flags; it never guesses retryability from status codes itself.
import { AISDKError, APICallError } from '@ai-sdk/provider';
import type { JsonValue, TurnError } from '@turnkit/core';
import { definedProps } from '@turnkit/core/internal';

/**
 * The error `generate` and `stream` throw. `turnError` is ready to be fed back as
 * `{ type: 'model_failed', error: err.turnError }`; `cause` keeps the provider's original error.
 */
export class ModelCallError extends Error {
  /** The failure as a `TurnError` (kind, message, `retryable`, details): feed it back as `model_failed`. */
  readonly turnError: TurnError;

  constructor(turnError: TurnError, options?: { readonly cause?: unknown }) {
    super(turnError.message, options);
    this.name = 'ModelCallError';
    this.turnError = turnError;
  }
}

/**
 * Maps any thrown value to a TurnError, so an interpreter can report a model failure without
 * knowing the provider. An error that already carries a `turnError` (a ModelCallError or another
 * adapter's error with the same property) keeps it.
 *
 * @example
 * try { response = await model.generate(request, { signal }) }
 * catch (error) { event = { type: 'model_failed', error: fromAISDKError(error) } }
 */
export function fromAISDKError(error: unknown): TurnError {
  if (isRecord(error) && isTurnError(error['turnError'])) return error['turnError'];
  if (APICallError.isInstance(error)) return fromApiCallError(error);
  if (isAbortError(error)) {
    return { kind: 'aborted', message: 'The model call was aborted before it finished.', retryable: false };
  }
  if (AISDKError.isInstance(error)) {
    // Invalid or unparsable response data, a missing API key, an unsupported setting: the
    // provider gave no retry flag, and retrying the same request would fail the same way.
    return {
      kind: 'provider_error',
      message: `The model provider failed: ${clause(error.message)}.`,
      retryable: false,
      data: { name: error.name },
    };
  }
  if (error instanceof Error) {
    return {
      kind: 'provider_error',
      message: `The model call failed: ${clause(error.message || error.name)}.`,
      retryable: false,
    };
  }
  if (isRecord(error) && typeof error['message'] === 'string') {
    // An error object sent inside a stream (e.g. `data: {"error": {...}}`), not an Error instance.
    const data = jsonOrUndefined(error);
    return {
      kind: 'provider_error',
      message: `The model provider reported an error: ${clause(error['message'])}.`,
      retryable: false,
      ...definedProps({ data }),
    };
  }
  return {
    kind: 'provider_error',
    message: `The model call failed with a non-error value: ${describe(error)}.`,
    retryable: false,
  };
}

/** The TurnError for a call the caller's abort signal cancelled. */
export function abortedError(signal: AbortSignal): TurnError {
  // A bare `abort()` gives a generic AbortError whose message adds nothing; a caller's own reason is kept.
  const reason =
    signal.reason instanceof Error
      ? signal.reason.name === 'AbortError'
        ? ''
        : signal.reason.message
      : typeof signal.reason === 'string'
        ? signal.reason
        : '';
  return {
    kind: 'aborted',
    message:
      reason === ''
        ? 'The model call was aborted by its abort signal.'
        : `The model call was aborted by its abort signal: ${clause(reason)}.`,
    retryable: false,
  };
}

function fromApiCallError(error: APICallError): TurnError {
  const status = error.statusCode;
  const detail = clause(error.message || 'no message');
  const retryAfterMs = retryAfter(error.responseHeaders);
  const data: { [key: string]: JsonValue } = {};
  if (status !== undefined) data['statusCode'] = status;
  if (retryAfterMs !== undefined) data['retryAfterMs'] = retryAfterMs;

  if (status === 429) {
    return {
      kind: 'rate_limited',
      message: `The model provider rate-limited the request (HTTP 429): ${detail}. Wait and retry, or lower the request rate.`,
      retryable: error.isRetryable,
      data,
    };
  }
  const what =
    status === undefined
      ? `The model provider could not be reached: ${detail}.`
      : `The model provider rejected the request (HTTP ${status}): ${detail}.`;
  const advice = error.isRetryable
    ? ' Retrying may succeed.'
    : ' Check the model id, the API key and the request before retrying.';
  return { kind: 'provider_error', message: what + advice, retryable: error.isRetryable, data };
}

/** Milliseconds from a `retry-after-ms` or `retry-after` (seconds or HTTP date) header. */
function retryAfter(headers: Record<string, string> | undefined): number | undefined {
  if (headers === undefined) return undefined;
  const lower = Object.fromEntries(Object.entries(headers).map(([key, value]) => [key.toLowerCase(), value]));
  const ms = Number.parseFloat(lower['retry-after-ms'] ?? '');
  if (Number.isFinite(ms) && ms >= 0) return Math.round(ms);
  const raw = lower['retry-after'];
  if (raw === undefined) return undefined;
  const seconds = Number.parseFloat(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function isAbortError(error: unknown): boolean {
  return isRecord(error) && (error['name'] === 'AbortError' || error['name'] === 'TimeoutError');
}

function isTurnError(value: unknown): value is TurnError {
  return isRecord(value) && typeof value['kind'] === 'string' && typeof value['message'] === 'string';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** A message as a clause to embed in a sentence: trimmed, without its final period. */
function clause(message: string): string {
  const trimmed = message.trim().replace(/[.\s]+$/, '');
  return trimmed === '' ? 'no message' : trimmed;
}

function describe(value: unknown): string {
  const json = jsonOrUndefined(value);
  const text = json === undefined ? String(value) : JSON.stringify(json);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function jsonOrUndefined(value: unknown): JsonValue | undefined {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? undefined : (JSON.parse(text) as JsonValue);
  } catch {
    return undefined;
  }
}
