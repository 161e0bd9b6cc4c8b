// The spans against the official @opentelemetry/semantic-conventions package (its incubating GenAI
// names and values, which are those of semantic-conventions v1.41.0, SEMCONV_VERSION): every
// attribute name turnkit writes is the conventions' own, each span has the attributes its span
// type requires, `gen_ai.provider.name` comes from an AI SDK model's `provider`, finish reasons are
// the conventions' words, and opt-in messages follow the conventions' message schema (transcribed
// below from docs/gen-ai/gen-ai-input-messages.json and gen-ai-output-messages.json, v1.41.0).

import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_DESCRIPTION,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC,
  GEN_AI_PROVIDER_NAME_VALUE_AWS_BEDROCK,
  GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_OPENAI,
  GEN_AI_PROVIDER_NAME_VALUE_GCP_GEMINI,
  GEN_AI_PROVIDER_NAME_VALUE_GCP_VERTEX_AI,
  GEN_AI_PROVIDER_NAME_VALUE_MISTRAL_AI,
  GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
  GEN_AI_PROVIDER_NAME_VALUE_X_AI,
} from '@opentelemetry/semantic-conventions/incubating';
import { SpanKind } from '@opentelemetry/api';
import { defineTool } from '@turnkit/dispatch';
import { runTurn } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ATTR, OPERATION, SEMCONV_VERSION, traceTurn } from '@turnkit/otel';
import { recorder } from './spans.js';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  readOnly: true,
  execute: ({ a, b }) => a + b,
});

// The message schema of the conventions, as much of it as turnkit's messages use: a role and
// parts; a part's type decides its required fields; an output message has a finish reason.
const kind = (type: string, required: string[], properties: object = {}) => ({
  type: 'object',
  required: ['type', ...required],
  properties: { type: { const: type }, ...properties },
});
const part = {
  oneOf: [
    kind('text', ['content'], { content: { type: 'string' } }),
    kind('reasoning', ['content'], { content: { type: 'string' } }),
    kind('tool_call', ['name'], { name: { type: 'string' }, id: { type: ['string', 'null'] } }),
    kind('tool_call_response', ['response'], { id: { type: ['string', 'null'] } }),
  ],
};
const chatMessage = {
  type: 'object',
  required: ['role', 'parts'],
  properties: { role: { type: 'string' }, parts: { type: 'array', items: part } },
};
const ajv = new Ajv2020({ allErrors: true });
const inputMessages = ajv.compile({ type: 'array', items: chatMessage });
const outputMessages = ajv.compile({
  type: 'array',
  items: {
    ...chatMessage,
    required: ['role', 'parts', 'finish_reason'],
    properties: { ...chatMessage.properties, finish_reason: { type: 'string' } },
  },
});
const FINISH_REASONS = ['stop', 'length', 'content_filter', 'tool_call', 'error'];

describe(`spans against @opentelemetry/semantic-conventions (GenAI, ${SEMCONV_VERSION})`, () => {
  it("every attribute name and operation turnkit writes is the conventions' own", () => {
    expect(ATTR).toEqual({
      operationName: ATTR_GEN_AI_OPERATION_NAME,
      providerName: ATTR_GEN_AI_PROVIDER_NAME,
      agentName: ATTR_GEN_AI_AGENT_NAME,
      agentId: ATTR_GEN_AI_AGENT_ID,
      conversationId: ATTR_GEN_AI_CONVERSATION_ID,
      requestModel: ATTR_GEN_AI_REQUEST_MODEL,
      responseModel: ATTR_GEN_AI_RESPONSE_MODEL,
      responseFinishReasons: ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
      usageInputTokens: ATTR_GEN_AI_USAGE_INPUT_TOKENS,
      usageOutputTokens: ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
      toolName: ATTR_GEN_AI_TOOL_NAME,
      toolCallId: ATTR_GEN_AI_TOOL_CALL_ID,
      toolType: ATTR_GEN_AI_TOOL_TYPE,
      toolDescription: ATTR_GEN_AI_TOOL_DESCRIPTION,
      toolCallArguments: ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
      toolCallResult: ATTR_GEN_AI_TOOL_CALL_RESULT,
      inputMessages: ATTR_GEN_AI_INPUT_MESSAGES,
      outputMessages: ATTR_GEN_AI_OUTPUT_MESSAGES,
      systemInstructions: ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
      errorType: ATTR_ERROR_TYPE,
    });
    expect(OPERATION).toEqual({
      invokeAgent: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
      chat: GEN_AI_OPERATION_NAME_VALUE_CHAT,
      executeTool: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
    });
  });

  it('a turn traced with an AI SDK model: required attributes on every span, the provider from the model, mapped finish reasons, messages in the schema', async () => {
    const rec = recorder();
    const model = scriptedModel([
      toolCalls(call('add', { a: 1, b: 2 }), { text: 'Adding.', reasoning: 'Use the tool.' }),
      text('1 + 2 = 3', { usage: { inputTokens: 20, outputTokens: 6 } }),
    ]);
    // What an AI SDK model carries (openai('gpt-4.1-mini') has these two fields).
    const aiSdkModel = { provider: 'openai.chat', modelId: 'gpt-4.1-mini' };
    const tracing = traceTurn({ agent: 'calculator', model: aiSdkModel, tracer: rec.tracer, recordContent: true });
    const result = await tracing.run(() =>
      runTurn({ model, tools: [add], input: 'What is 1 + 2?', id: 'turn-1', ...tracing.hooks }),
    );
    expect(result.status).toBe('stopped');

    const agent = rec.one('invoke_agent calculator');
    const chats = rec.named('chat gpt-4.1-mini');
    const tool = rec.one('execute_tool add');
    expect(agent.kind).toBe(SpanKind.INTERNAL);
    expect(tool.kind).toBe(SpanKind.INTERNAL);
    expect(chats.map((s) => s.kind)).toEqual([SpanKind.CLIENT, SpanKind.CLIENT]);
    // Required: operation and provider on invoke_agent and chat; operation and tool name on execute_tool.
    for (const span of [agent, ...chats]) {
      expect(span.attributes[ATTR_GEN_AI_PROVIDER_NAME]).toBe(GEN_AI_PROVIDER_NAME_VALUE_OPENAI);
      expect(span.attributes[ATTR_GEN_AI_REQUEST_MODEL]).toBe('gpt-4.1-mini');
    }
    expect(agent.attributes[ATTR_GEN_AI_OPERATION_NAME]).toBe(GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT);
    for (const chat of chats) expect(chat.attributes[ATTR_GEN_AI_OPERATION_NAME]).toBe(GEN_AI_OPERATION_NAME_VALUE_CHAT);
    expect(tool.attributes).toMatchObject({
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
      [ATTR_GEN_AI_TOOL_NAME]: 'add',
    });
    // Finish reasons in the conventions' words (the AI SDK's `tool-calls` is `tool_call`).
    expect(chats.map((s) => s.attributes[ATTR_GEN_AI_RESPONSE_FINISH_REASONS])).toEqual([['tool_call'], ['stop']]);

    for (const span of [agent, ...chats]) {
      const input = JSON.parse(String(span.attributes[ATTR_GEN_AI_INPUT_MESSAGES]));
      expect(inputMessages(input), `${span.name} input: ${JSON.stringify(inputMessages.errors)}`).toBe(true);
      const output = JSON.parse(String(span.attributes[ATTR_GEN_AI_OUTPUT_MESSAGES]));
      expect(outputMessages(output), `${span.name} output: ${JSON.stringify(outputMessages.errors)}`).toBe(true);
      for (const message of output) expect(FINISH_REASONS).toContain(message.finish_reason);
    }
    // The second model call sees the whole conversation: the tool call and its response by id.
    expect(JSON.parse(String(chats[1]?.attributes[ATTR_GEN_AI_INPUT_MESSAGES]))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'What is 1 + 2?' }] },
      {
        role: 'assistant',
        parts: [
          { type: 'reasoning', content: 'Use the tool.' },
          { type: 'text', content: 'Adding.' },
          { type: 'tool_call', id: 'call_1', name: 'add', arguments: { a: 1, b: 2 } },
        ],
      },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_1', response: 3 }] },
    ]);
    expect(JSON.parse(String(chats[0]?.attributes[ATTR_GEN_AI_OUTPUT_MESSAGES]))).toEqual([
      {
        role: 'assistant',
        parts: [
          { type: 'reasoning', content: 'Use the tool.' },
          { type: 'text', content: 'Adding.' },
          { type: 'tool_call', id: 'call_1', name: 'add', arguments: { a: 1, b: 2 } },
        ],
        finish_reason: 'tool_call',
      },
    ]);
  });

  it("AI SDK provider ids give the conventions' well-known provider names; `provider` wins over the model's", async () => {
    const named = async (options: Parameters<typeof traceTurn>[0]) => {
      const rec = recorder();
      const tracing = traceTurn({ ...options, tracer: rec.tracer });
      await tracing.run(() => runTurn({ model: scriptedModel([text('ok')]), input: 'hi', ...tracing.hooks }));
      return rec.one(`invoke_agent ${options.agent}`).attributes[ATTR_GEN_AI_PROVIDER_NAME];
    };
    const cases: [string, string][] = [
      ['openai.chat', GEN_AI_PROVIDER_NAME_VALUE_OPENAI],
      ['openai.responses', GEN_AI_PROVIDER_NAME_VALUE_OPENAI],
      ['anthropic.messages', GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC],
      ['google.generative-ai', GEN_AI_PROVIDER_NAME_VALUE_GCP_GEMINI],
      ['google.vertex.chat', GEN_AI_PROVIDER_NAME_VALUE_GCP_VERTEX_AI],
      ['amazon-bedrock', GEN_AI_PROVIDER_NAME_VALUE_AWS_BEDROCK],
      ['azure.chat', GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_OPENAI],
      ['mistral.chat', GEN_AI_PROVIDER_NAME_VALUE_MISTRAL_AI],
      ['xai.chat', GEN_AI_PROVIDER_NAME_VALUE_X_AI],
      ['ollama.chat', 'ollama'],
    ];
    for (const [provider, expected] of cases)
      expect(await named({ agent: 'a', model: { provider, modelId: 'm' } }), provider).toBe(expected);
    expect(await named({ agent: 'b', model: { provider: 'openai.chat', modelId: 'm' }, provider: 'azure.ai.openai' })).toBe(
      'azure.ai.openai',
    );
    expect(() => traceTurn({ agent: 'c', model: { provider: 'openai.chat' } as unknown as string })).toThrow(
      /model must be the model's name or a model object with a provider and a modelId/,
    );
  });
});
