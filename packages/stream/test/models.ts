// Hand-written models for the stream tests: each reply is a list of parts, so a test controls
// exactly what the model streams (and can watch how far the model got).
import type { Model, ModelRequest, ModelResponse, ModelStreamPart, ToolCall } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import { z } from 'zod';

/** The tool most stream tests call: adds two numbers, changes nothing. */
export const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  readOnly: true,
  execute: ({ a, b }) => a + b,
});

/** The parts of a reply with `text` (split into words) and `calls` (arguments split in two). */
export function replyParts(text: string, calls: readonly ToolCall[] = []): ModelStreamPart[] {
  const parts: ModelStreamPart[] = (text.match(/\S+\s*|\s+/g) ?? []).map((piece) => ({ type: 'text_delta', text: piece }));
  for (const call of calls) {
    const args = JSON.stringify(call.input);
    parts.push({ type: 'tool_call_start', id: call.id, name: call.name });
    parts.push({ type: 'tool_call_delta', id: call.id, argsText: args.slice(0, 3) });
    parts.push({ type: 'tool_call_delta', id: call.id, argsText: args.slice(3) });
    parts.push({ type: 'tool_call_end', id: call.id });
  }
  parts.push({
    type: 'finish',
    usage: { inputTokens: 10, outputTokens: 5 },
    finishReason: calls.length > 0 ? 'tool_calls' : 'stop',
  });
  return parts;
}

/** The response the same reply gives through generate(). */
export function replyResponse(text: string, calls: readonly ToolCall[] = []): ModelResponse {
  return {
    text,
    toolCalls: calls,
    usage: { inputTokens: 10, outputTokens: 5 },
    finishReason: calls.length > 0 ? 'tool_calls' : 'stop',
  };
}

export interface Reply {
  readonly text: string;
  readonly calls?: readonly ToolCall[];
}

export interface WatchedModel extends Model {
  readonly requests: ModelRequest[];
  /** Parts the model has yielded so far (over all calls). */
  yielded: number;
  /** Times a stream was closed (finished, broken off or aborted). */
  closed: number;
}

/** A model answering `replies` in order, through stream() (and generate(), for the inline reference). */
export function streamingModel(
  replies: readonly (Reply | readonly ModelStreamPart[])[],
  options: { readonly streams?: boolean } = {},
): WatchedModel {
  let call = 0;
  const model: WatchedModel = {
    requests: [],
    yielded: 0,
    closed: 0,
    async generate(request) {
      model.requests.push(request);
      const reply = replies[call++];
      if (reply === undefined || Array.isArray(reply)) throw new Error(`streamingModel: no generate() reply for call ${call}.`);
      const { text, calls = [] } = reply as Reply;
      return replyResponse(text, calls);
    },
  };
  if (options.streams !== false) {
    model.stream = async function* (request) {
      model.requests.push(request);
      const reply = replies[call++];
      if (reply === undefined) throw new Error(`streamingModel: no reply for call ${call}.`);
      const parts = Array.isArray(reply)
        ? (reply as readonly ModelStreamPart[])
        : replyParts((reply as Reply).text, (reply as Reply).calls);
      try {
        for (const part of parts) {
          model.yielded += 1;
          yield part;
        }
      } finally {
        model.closed += 1;
      }
    };
  }
  return model;
}

/** A promise with its resolve function, for tests that release work in a chosen order. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
