// One model call, streamed: pull parts from `model.stream()`, pass each derived event to the
// reader (waiting for it: that is the backpressure), and aggregate the parts into the response
// the turn machine receives. A model without `stream()` answers through `generate()`, and its
// text reaches the reader as one delta. Failures are thrown, so the driver maps them to
// `model_failed` exactly as it does for `generate()`, saying whether output already reached the
// reader (then core does not retry).
import type { Model, ModelCallOptions, ModelRequest, ModelResponse } from '@turnkit/core';
import { createAggregator } from './aggregate.js';
import type { TurnStreamEvent } from './events.js';
import type { EventSink } from './handoff.js';

/**
 * Performs one model call for a streamed turn and returns the aggregated response. Throws what the
 * model throws, a StreamProtocolError for a broken stream, or the abort reason once `signal` aborts.
 */
export async function streamModelResponse(
  model: Model,
  request: ModelRequest,
  options: ModelCallOptions,
  sink: EventSink<TurnStreamEvent>,
): Promise<ModelResponse> {
  if (typeof model.stream !== 'function') return generateAsOneDelta(model, request, options, sink);
  const aggregator = createAggregator();
  // for await closes the model's iterator (return()) on every exit, including an abort.
  for await (const part of model.stream(request, options)) {
    options.signal.throwIfAborted();
    const event = aggregator.push(part);
    if (event === undefined) continue;
    const taken = sink.send(event);
    if (taken !== undefined) await taken;
  }
  options.signal.throwIfAborted();
  return aggregator.finish();
}

async function generateAsOneDelta(
  model: Model,
  request: ModelRequest,
  options: ModelCallOptions,
  sink: EventSink<TurnStreamEvent>,
): Promise<ModelResponse> {
  const response = await model.generate(request, options);
  options.signal.throwIfAborted();
  // The turn machine validates the response; only well-formed pieces are announced here.
  const pieces: TurnStreamEvent[] = [];
  if (response !== null && typeof response === 'object') {
    if (typeof response.reasoning === 'string' && response.reasoning !== '')
      pieces.push({ type: 'reasoning_delta', text: response.reasoning });
    if (typeof response.text === 'string' && response.text !== '') pieces.push({ type: 'text_delta', text: response.text });
    if (Array.isArray(response.toolCalls)) {
      for (const call of response.toolCalls)
        if (call !== null && typeof call === 'object') pieces.push({ type: 'tool_call', call });
    }
  }
  for (const piece of pieces) {
    const taken = sink.send(piece);
    if (taken !== undefined) await taken;
  }
  return response;
}
