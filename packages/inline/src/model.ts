// Calling the model: the request a `call_llm` effect asks for, built with core's
// `buildModelRequest`. Retries are core's decision (a retry is another `call_llm`).

import { buildModelRequest, type Message, type ModelRequest, type ToolSpec, type TurnError } from '@turnkit/core';
import { errorMessage, type CallLlmRequest } from '@turnkit/core/internal';
import type { SelectToolsFn, ToolSelectionInfo } from './types.js';

/** How the tools of one model call are chosen (`selectTools` and `alwaysOffer` of runTurn). */
export interface ToolSelection {
  /** Chooses the tools offered to each model call (`runTurn`'s `selectTools`). Default: every tool. */
  readonly selectTools?: SelectToolsFn | undefined;
  /** Tools offered to every call whatever `selectTools` returns (`runTurn`'s `alwaysOffer`). */
  readonly alwaysOffer?: readonly string[] | undefined;
}

/** A `selectTools` that broke: its `turnError` (kind `tool_selection_failed`) fails the turn, with no retry. */
export class ToolSelectionError extends Error {
  /** The failure as a `TurnError` (kind `tool_selection_failed`): the turn fails with it. */
  readonly turnError: TurnError;
  constructor(message: string) {
    super(message);
    this.name = 'ToolSelectionError';
    this.turnError = { kind: 'tool_selection_failed', message, retryable: false };
  }
}

/**
 * The request the model sees for a `call_llm` effect (a copy of the transcript, so later
 * appends do not show). With `selection.selectTools`, only the tools it names and the
 * `alwaysOffer` ones are offered, in the dispatcher's order; a forced final call offers none and
 * does not ask. Throws a ToolSelectionError when `selectTools` throws or returns anything but
 * names of defined tools.
 */
export function modelRequestFor(
  request: CallLlmRequest,
  transcript: readonly Message[],
  tools: readonly ToolSpec[],
  selection: ToolSelection = {},
): ModelRequest {
  const messages = transcript.slice();
  if (request.final || selection.selectTools === undefined) return buildModelRequest(request, messages, tools);
  const info: ToolSelectionInfo =
    request.modelOverride === undefined
      ? { transcript: messages.slice(), iteration: request.iteration, tools }
      : { transcript: messages.slice(), iteration: request.iteration, tools, modelOverride: request.modelOverride };
  let chosen: unknown;
  try {
    chosen = selection.selectTools(info);
  } catch (error) {
    throw new ToolSelectionError(
      `The selectTools function threw: ${errorMessage(error)}. Fix the function passed as \`selectTools\`; no model call was made.`,
    );
  }
  const known = new Set(tools.map((t) => t.name));
  if (!Array.isArray(chosen) || chosen.some((name) => typeof name !== 'string')) {
    throw new ToolSelectionError(
      `The selectTools function must return an array of tool names; it returned ${describe(chosen)}. No model call was made.`,
    );
  }
  const unknown = (chosen as string[]).filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new ToolSelectionError(
      `The selectTools function chose ${unknown.map((n) => `'${n}'`).join(', ')}, which ${unknown.length === 1 ? 'is not a defined tool' : 'are not defined tools'} (the tools: ${[...known].map((n) => `'${n}'`).join(', ') || 'none'}). No model call was made.`,
    );
  }
  const offered = new Set([...(chosen as string[]), ...(selection.alwaysOffer ?? [])]);
  return buildModelRequest(
    request,
    messages,
    tools.filter((t) => offered.has(t.name)),
  );
}

function describe(value: unknown): string {
  if (value === undefined || value === null) return String(value);
  if (Array.isArray(value)) return `an array holding ${describe(value.find((v) => typeof v !== 'string'))}`;
  return typeof value === 'string' ? `the string '${value}'` : `a value of type ${typeof value}`;
}
