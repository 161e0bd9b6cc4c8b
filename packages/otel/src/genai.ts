// turnkit's data in the GenAI conventions' shapes: the provider's name from an AI SDK model's
// `provider` (`openai.chat` → `openai`), finish reasons in the conventions' words (`tool-calls` →
// `tool_call`), and messages in the conventions' message schema (a role and `parts`, each part a
// `text`, `tool_call`, `tool_call_response` or `reasoning`; an output message has `finish_reason`).

import type { JsonValue, Message, ModelResponse } from '@turnkit/core';

/**
 * What `traceTurn` reads from a model object: an AI SDK language model has both (`openai('gpt-4.1')`
 * has `provider: 'openai.chat'` and `modelId: 'gpt-4.1'`).
 */
export interface ModelIdentity {
  /** The provider's id, as the AI SDK gives it (`openai.chat`, `anthropic.messages`, …). */
  readonly provider: string;
  /** The model's id at its provider (`gpt-4.1-mini`), the span's `gen_ai.request.model`. */
  readonly modelId: string;
}

// The AI SDK's provider ids (their part before the first dot) whose provider has a well-known
// `gen_ai.provider.name` under another name; the others keep their own (`openai`, `anthropic`, …).
const WELL_KNOWN: Readonly<Record<string, string>> = {
  google: 'gcp.gemini',
  'google-vertex': 'gcp.vertex_ai',
  vertex: 'gcp.vertex_ai',
  'amazon-bedrock': 'aws.bedrock',
  bedrock: 'aws.bedrock',
  azure: 'azure.ai.openai',
  'azure-openai': 'azure.ai.openai',
  mistral: 'mistral_ai',
  xai: 'x_ai',
  watsonx: 'ibm.watsonx.ai',
};

/** `gen_ai.provider.name` for an AI SDK provider id: `openai.chat` → `openai`, `google.vertex.chat` → `gcp.vertex_ai`. */
export function providerName(provider: string): string {
  const id = provider.trim().toLowerCase();
  if (id.startsWith('google.vertex')) return 'gcp.vertex_ai';
  const head = id.split('.')[0] ?? id;
  return WELL_KNOWN[head] ?? head;
}

// The AI SDK's finish reasons (core passes them on) in the conventions' words; others pass as they are.
const FINISH_REASONS: Readonly<Record<string, string>> = {
  'tool-calls': 'tool_call',
  tool_calls: 'tool_call',
  'content-filter': 'content_filter',
};

/** A finish reason in the conventions' words: `tool-calls` → `tool_call`, `content-filter` → `content_filter`. */
export function finishReason(reason: string): string {
  return FINISH_REASONS[reason] ?? reason;
}

/** One part of a message, as the conventions' message schema has it. */
export type MessagePart =
  | { readonly type: 'text'; readonly content: string }
  | { readonly type: 'reasoning'; readonly content: string }
  | { readonly type: 'tool_call'; readonly id: string; readonly name: string; readonly arguments: JsonValue }
  | { readonly type: 'tool_call_response'; readonly id: string; readonly response: JsonValue };

/** A message of `gen_ai.input.messages`; one of `gen_ai.output.messages` also has `finish_reason`. */
export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  readonly parts: readonly MessagePart[];
  readonly finish_reason?: string;
}

const text = (content: string): MessagePart => ({ type: 'text', content });

function assistantParts(content: string, reply: Pick<ModelResponse, 'toolCalls' | 'reasoning'>): MessagePart[] {
  const parts: MessagePart[] = [];
  if (reply.reasoning !== undefined && reply.reasoning !== '') parts.push({ type: 'reasoning', content: reply.reasoning });
  if (content !== '' || reply.toolCalls.length === 0) parts.push(text(content));
  for (const call of reply.toolCalls) parts.push({ type: 'tool_call', id: call.id, name: call.name, arguments: call.input });
  return parts;
}

/** A core message as the conventions' input message. */
export function chatMessage(message: Message): ChatMessage {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, parts: [text(message.content)] };
    case 'assistant':
      return { role: 'assistant', parts: assistantParts(message.content, message) };
    case 'tool':
      return {
        role: 'tool',
        parts: [{ type: 'tool_call_response', id: message.result.callId, response: message.result.output }],
      };
  }
}

/** A model's reply as the conventions' output message (its finish reason mapped, or read from the reply). */
export function replyMessage(response: ModelResponse): ChatMessage {
  const reason =
    response.finishReason === undefined
      ? response.toolCalls.length > 0
        ? 'tool_call'
        : 'stop'
      : finishReason(response.finishReason);
  return { role: 'assistant', parts: assistantParts(response.text, response), finish_reason: reason };
}

/** A turn's answer as the conventions' output message (structured output as its JSON text). */
export function answerMessage(output: JsonValue): ChatMessage {
  return {
    role: 'assistant',
    parts: [text(typeof output === 'string' ? output : JSON.stringify(output))],
    finish_reason: 'stop',
  };
}
