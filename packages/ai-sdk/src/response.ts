// AI SDK results -> turnkit responses. Provider output is untrusted: tool arguments that are not
// JSON become an `inputError` on the call (the turn reports it to the model), never a crash.
import type { LanguageModelV3GenerateResult, LanguageModelV3Usage } from '@ai-sdk/provider';
import type { JsonValue, ModelResponse, ToolCall, Usage } from '@turnkit/core';
import { costOf, type ModelPrice } from './pricing.js';
import { definedProps } from '@turnkit/core/internal';

/** A `doGenerate` result as a turnkit ModelResponse; `modelId` falls back to the model's own id. */
export function fromGenerateResult(result: LanguageModelV3GenerateResult, modelId: string, price?: ModelPrice): ModelResponse {
  let text = '';
  let reasoning = '';
  const toolCalls: ToolCall[] = [];
  for (const part of result.content) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'reasoning') reasoning += part.text;
    // Provider-executed calls (e.g. a hosted web search) already ran; they are not ours to dispatch.
    else if (part.type === 'tool-call' && part.providerExecuted !== true)
      toolCalls.push(toToolCall(part.toolCallId, part.toolName, part.input));
  }
  return {
    text,
    toolCalls,
    ...(reasoning === '' ? {} : { reasoning }),
    usage: toUsage(result.usage, price),
    finishReason: result.finishReason.unified,
    modelId: result.response?.modelId ?? modelId,
  };
}

/** A tool call from its JSON-encoded input; an empty input means no arguments (`{}`). */
export function toToolCall(id: string, name: string, inputText: string): ToolCall {
  if (inputText.trim() === '') return { id, name, input: {} };
  try {
    return { id, name, input: JSON.parse(inputText) as JsonValue };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      id,
      name,
      input: inputText,
      inputError: `The arguments of tool call '${id}' to '${name}' are not valid JSON (${reason}); send them again as one JSON object.`,
    };
  }
}

/**
 * AI SDK usage as turnkit usage. Counts the provider did not report are left out. `cost` is
 * priced from the tokens with `price` (fromAISDK's `pricing`), else 0.
 */
export function toUsage(usage: LanguageModelV3Usage | undefined, price?: ModelPrice): Partial<Usage> {
  const input = count(usage?.inputTokens?.total);
  const output = count(usage?.outputTokens?.total);
  return {
    ...definedProps({ inputTokens: input }),
    ...definedProps({ outputTokens: output }),
    ...(input === undefined && output === undefined ? {} : { totalTokens: (input ?? 0) + (output ?? 0) }),
    cost: price === undefined ? 0 : costOf(price, input ?? 0, output ?? 0),
  };
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}
