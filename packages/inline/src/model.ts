// Calling the model: build the request with core's `buildModelRequest`, map a thrown error to a
// TurnError, retry retryable errors with backoff. Shared by every interpreter built on the driver.

import { buildModelRequest, errorMessage, toTurnError, type CallModelRequest, type Message, type Model, type ModelRequest, type ModelResponse, type ToolSpec, type TurnError, type TurnEvent } from '@turnkit/core';
import { sleep } from './abort.js';
import type { SelectToolsFn, ToolSelectionInfo } from './types.js';

const record = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object';

// One mapping of thrown errors for every interpreter: core's (re-exported here, as before).
export { errorMessage, toTurnError };

/** How the tools of one model call are chosen (`selectTools` and `alwaysOffer` of runTurn). */
export interface ToolSelection {
  readonly selectTools?: SelectToolsFn;
  readonly alwaysOffer?: readonly string[];
}

/** A `selectTools` that broke: its `turnError` (kind `tool_selection_failed`) fails the turn, with no retry. */
export class ToolSelectionError extends Error {
  readonly turnError: TurnError;
  constructor(message: string) {
    super(message);
    this.name = 'ToolSelectionError';
    this.turnError = { kind: 'tool_selection_failed', message, retryable: false };
  }
}

/**
 * The request the model sees for a `call_model` effect (a copy of the transcript, so later
 * appends do not show). With `selection.selectTools`, only the tools it names and the
 * `alwaysOffer` ones are offered, in the dispatcher's order; a forced final call offers none and
 * does not ask. Throws a ToolSelectionError when `selectTools` throws or returns anything but
 * names of defined tools.
 */
export function modelRequestFor(request: CallModelRequest, transcript: readonly Message[], tools: readonly ToolSpec[], selection: ToolSelection = {}): ModelRequest {
  const messages = transcript.slice();
  if (request.final || selection.selectTools === undefined) return buildModelRequest(request, messages, tools);
  const info: ToolSelectionInfo = request.modelOverride === undefined
    ? { transcript: messages.slice(), iteration: request.iteration, tools }
    : { transcript: messages.slice(), iteration: request.iteration, tools, modelOverride: request.modelOverride };
  let chosen: unknown;
  try {
    chosen = selection.selectTools(info);
  } catch (error) {
    throw new ToolSelectionError(`The selectTools function threw: ${errorMessage(error)}. Fix the function passed as \`selectTools\`; no model call was made.`);
  }
  const known = new Set(tools.map((t) => t.name));
  if (!Array.isArray(chosen) || chosen.some((name) => typeof name !== 'string')) {
    throw new ToolSelectionError(`The selectTools function must return an array of tool names; it returned ${describe(chosen)}. No model call was made.`);
  }
  const unknown = (chosen as string[]).filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new ToolSelectionError(
      `The selectTools function chose ${unknown.map((n) => `'${n}'`).join(', ')}, which ${unknown.length === 1 ? 'is not a defined tool' : 'are not defined tools'} (the tools: ${[...known].map((n) => `'${n}'`).join(', ') || 'none'}). No model call was made.`,
    );
  }
  const offered = new Set([...(chosen as string[]), ...(selection.alwaysOffer ?? [])]);
  return buildModelRequest(request, messages, tools.filter((t) => offered.has(t.name)));
}

function describe(value: unknown): string {
  if (value === undefined || value === null) return String(value);
  if (Array.isArray(value)) return `an array holding ${describe(value.find((v) => typeof v !== 'string'))}`;
  return typeof value === 'string' ? `the string '${value}'` : `a value of type ${typeof value}`;
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
