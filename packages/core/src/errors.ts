// Turning whatever a model call threw into a TurnError. Pure, and shared by every interpreter so
// they all report the same fault the same way.

import type { TurnError } from './types.js';

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

/** A readable message for any thrown value: never throws (a value that cannot be read is described as such), at most 2000 characters. */
export function errorMessage(error: unknown): string {
  let text: string;
  try {
    if (error instanceof Error) text = error.message.length > 0 ? error.message : error.name;
    else if (record(error) && typeof error.message === 'string') text = error.message;
    else if (typeof error === 'string') text = error;
    else text = JSON.stringify(error) ?? String(error);
  } catch {
    text = describeUnreadable(error);
  }
  if (typeof text !== 'string' || text === '') text = 'no message';
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}

function describeUnreadable(error: unknown): string {
  try {
    return String(error);
  } catch {
    return 'an unreadable error';
  }
}
