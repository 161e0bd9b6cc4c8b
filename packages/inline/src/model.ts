// Calling the model: the request a `call_model` effect asks for, built with core's
// `buildModelRequest`. Retries are core's decision (a retry is another `call_model`).

import { buildModelRequest, type CallModelRequest, type Message, type ModelRequest, type ToolSpec } from '@turnkit/core';

/** The request the model sees for a `call_model` effect (a copy of the transcript, so later appends do not show). */
export function modelRequestFor(request: CallModelRequest, transcript: readonly Message[], tools: readonly ToolSpec[]): ModelRequest {
  return buildModelRequest(request, transcript.slice(), tools);
}
