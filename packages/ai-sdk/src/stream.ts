// AI SDK stream parts -> turnkit stream parts. Tool input arrives either as start/delta/end
// parts, or (for providers that do not stream arguments) as one complete `tool-call` part; both
// become tool_call_start, tool_call_delta…, tool_call_end, so interpreters see a single shape.
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import type { ModelStreamPart } from '@turnkit/core';
import { ModelCallError, fromAISDKError } from './errors.js';
import type { ModelPrice } from './pricing.js';
import { toUsage } from './response.js';

interface CallProgress {
  /** Provider-executed: not ours, nothing is forwarded. */
  readonly skipped: boolean;
  /** Deltas are raw text, not JSON; the complete `tool-call` part carries the JSON. */
  readonly textEncoded: boolean;
  ended: boolean;
}

/** Maps a provider stream; an `error` part throws a ModelCallError. */
export async function* toModelStreamParts(
  parts: AsyncIterable<LanguageModelV3StreamPart>,
  modelId: string,
  price?: ModelPrice,
): AsyncGenerator<ModelStreamPart> {
  const calls = new Map<string, CallProgress>();
  let responseModelId = modelId;
  for await (const part of parts) {
    switch (part.type) {
      case 'text-delta':
        if (part.delta !== '') yield { type: 'text_delta', text: part.delta };
        break;
      case 'reasoning-delta':
        if (part.delta !== '') yield { type: 'reasoning_delta', text: part.delta };
        break;
      case 'tool-input-start': {
        const skipped = part.providerExecuted === true;
        calls.set(part.id, { skipped, textEncoded: part.inputEncoding === 'text', ended: false });
        if (!skipped) yield { type: 'tool_call_start', id: part.id, name: part.toolName };
        break;
      }
      case 'tool-input-delta': {
        const call = calls.get(part.id);
        if (call !== undefined && forwards(call) && !call.textEncoded && part.delta !== '')
          yield { type: 'tool_call_delta', id: part.id, argsText: part.delta };
        break;
      }
      case 'tool-input-end': {
        const call = calls.get(part.id);
        if (call !== undefined && forwards(call) && !call.textEncoded) {
          call.ended = true;
          yield { type: 'tool_call_end', id: part.id };
        }
        break;
      }
      case 'tool-call': {
        if (part.providerExecuted === true) break;
        const call = calls.get(part.toolCallId);
        if (call === undefined) {
          calls.set(part.toolCallId, { skipped: false, textEncoded: false, ended: true });
          yield { type: 'tool_call_start', id: part.toolCallId, name: part.toolName };
          yield { type: 'tool_call_delta', id: part.toolCallId, argsText: part.input };
          yield { type: 'tool_call_end', id: part.toolCallId };
        } else if (forwards(call)) {
          call.ended = true;
          if (call.textEncoded) yield { type: 'tool_call_delta', id: part.toolCallId, argsText: part.input };
          yield { type: 'tool_call_end', id: part.toolCallId };
        }
        break;
      }
      case 'response-metadata':
        if (part.modelId !== undefined) responseModelId = part.modelId;
        break;
      case 'finish':
        yield {
          type: 'finish',
          usage: toUsage(part.usage, price),
          finishReason: part.finishReason.unified,
          modelId: responseModelId,
        };
        break;
      case 'error':
        throw new ModelCallError(fromAISDKError(part.error), { cause: part.error });
      default:
        // stream-start, text/reasoning start and end, files, sources, raw chunks and
        // provider-executed tool results carry nothing a turnkit transcript holds.
        break;
    }
  }
}

function forwards(call: CallProgress): boolean {
  return !call.skipped && !call.ended;
}

/** Reads a web stream as an async iterable and cancels it (closing the connection) when the reader stops early. */
export async function* readStream<T>(stream: ReadableStream<T>): AsyncGenerator<T> {
  const reader = stream.getReader();
  let finished = false;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) {
        finished = true;
        return;
      }
      yield next.value;
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
