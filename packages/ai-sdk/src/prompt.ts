// turnkit request -> AI SDK call options. Only the shapes change here; how each provider encodes
// a prompt (roles, tool results, reasoning) is the provider package's job.
import type {
  JSONSchema7,
  JSONValue,
  LanguageModelV3CallOptions,
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultPart,
} from '@ai-sdk/provider';
import type { Message, ModelRequest, ToolResult, ToolSpec } from '@turnkit/core';

/** Call settings passed through to every provider call (temperature, maxOutputTokens, headers, providerOptions…). */
export type CallSettings = Omit<
  LanguageModelV3CallOptions,
  'prompt' | 'tools' | 'toolChoice' | 'abortSignal' | 'includeRawChunks'
>;

/** The AI SDK call options for a turnkit request. */
export function toCallOptions(request: ModelRequest, signal: AbortSignal, settings: CallSettings): LanguageModelV3CallOptions {
  return {
    ...settings,
    prompt: toPrompt(request.messages),
    ...(request.tools.length > 0 ? { tools: request.tools.map(toFunctionTool) } : {}),
    toolChoice: { type: request.toolChoice },
    abortSignal: signal,
  };
}

/** A turnkit transcript as an AI SDK prompt. Consecutive tool results share one tool message. */
export function toPrompt(messages: readonly Message[]): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Message[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        prompt.push({ role: 'system', content: message.content });
        break;
      case 'user':
        prompt.push({ role: 'user', content: [{ type: 'text', text: message.content }] });
        break;
      case 'assistant':
        prompt.push(toAssistantMessage(message));
        break;
      case 'tool': {
        const part = toToolResultPart(message.result);
        const last = prompt.at(-1);
        if (last?.role === 'tool') last.content.push(part);
        else prompt.push({ role: 'tool', content: [part] });
        break;
      }
      default:
        throw new TypeError(
          `Cannot send a message with role ${JSON.stringify((message as { role?: unknown }).role)} to the model; expected system, user, assistant or tool.`,
        );
    }
  }
  return prompt;
}

/**
 * A call whose arguments were not JSON keeps the text the model wrote, wrapped in an object:
 * several providers (Anthropic, Bedrock) reject a tool call whose input is not an object, which
 * would fail the very next call instead of letting the model read the error result and retry.
 */
function toAssistantMessage(message: Extract<Message, { role: 'assistant' }>): LanguageModelV3Message {
  const content: Extract<LanguageModelV3Message, { role: 'assistant' }>['content'] = [];
  if (message.reasoning !== undefined && message.reasoning !== '') content.push({ type: 'reasoning', text: message.reasoning });
  if (message.content !== '') content.push({ type: 'text', text: message.content });
  for (const call of message.toolCalls) {
    content.push({
      type: 'tool-call',
      toolCallId: call.id,
      toolName: call.name,
      input: call.inputError === undefined ? call.input : { rawInvalidInput: call.input },
    });
  }
  return { role: 'assistant', content };
}

function toToolResultPart(result: ToolResult): LanguageModelV3ToolResultPart {
  // Strings go as text so the model does not see them JSON-quoted; anything else as JSON.
  const value = result.output as JSONValue;
  const output: LanguageModelV3ToolResultPart['output'] = result.isError
    ? typeof value === 'string'
      ? { type: 'error-text', value }
      : { type: 'error-json', value }
    : typeof value === 'string'
      ? { type: 'text', value }
      : { type: 'json', value };
  return { type: 'tool-result', toolCallId: result.callId, toolName: result.name, output };
}

function toFunctionTool(spec: ToolSpec): LanguageModelV3FunctionTool {
  return { type: 'function', name: spec.name, description: spec.description, inputSchema: spec.inputSchema as JSONSchema7 };
}
