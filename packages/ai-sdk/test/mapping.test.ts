import { APICallError } from '@ai-sdk/provider';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { Message } from '@turnkit/core';
import { fromAISDK, type FromAISDKOptions, ModelCallError, fromAISDKError } from '@turnkit/ai-sdk';
import { toPrompt } from '../src/prompt.ts';
import { describe, expect, it } from 'vitest';
import { scriptedModel, usage } from './scripted-model.js';
import { drain, request, signal, userAsks } from './setup.js';

const finish = { type: 'finish', usage: usage(3, 2), finishReason: { unified: 'tool-calls', raw: 'tool_use' } } as const;

describe('stream mapping beyond the OpenAI-compatible provider', () => {
  it('turns a complete tool-call part with no input parts into start, one delta, end', async () => {
    const model = scriptedModel({
      stream: [{ type: 'tool-call', toolCallId: 't1', toolName: 'get_weather', input: '{"city":"Rome"}' }, finish],
    });
    const { parts } = await drain(fromAISDK(model).stream!(request(userAsks), { signal: signal() }));
    expect(parts).toEqual([
      { type: 'tool_call_start', id: 't1', name: 'get_weather' },
      { type: 'tool_call_delta', id: 't1', argsText: '{"city":"Rome"}' },
      { type: 'tool_call_end', id: 't1' },
      {
        type: 'finish',
        usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5, cost: 0 },
        finishReason: 'tool-calls',
        modelId: 'scripted-1',
      },
    ]);
  });

  it('does not repeat a call that was streamed as input parts and then completed', async () => {
    const model = scriptedModel({
      stream: [
        { type: 'tool-input-start', id: 't1', toolName: 'get_weather' },
        { type: 'tool-input-delta', id: 't1', delta: '{"city":"Rome"}' },
        { type: 'tool-input-end', id: 't1' },
        { type: 'tool-call', toolCallId: 't1', toolName: 'get_weather', input: '{"city":"Rome"}' },
        finish,
      ],
    });
    const { parts } = await drain(fromAISDK(model).stream!(request(userAsks), { signal: signal() }));
    expect(parts.map((p) => p.type)).toEqual(['tool_call_start', 'tool_call_delta', 'tool_call_end', 'finish']);
  });

  it('sends the JSON input of a text-encoded call, not its raw text deltas', async () => {
    const model = scriptedModel({
      stream: [
        { type: 'tool-input-start', id: 't1', toolName: 'write_note', inputEncoding: 'text' },
        { type: 'tool-input-delta', id: 't1', delta: 'hello ' },
        { type: 'tool-input-delta', id: 't1', delta: 'world' },
        { type: 'tool-input-end', id: 't1' },
        { type: 'tool-call', toolCallId: 't1', toolName: 'write_note', input: '"hello world"' },
        finish,
      ],
    });
    const { parts } = await drain(fromAISDK(model).stream!(request(userAsks), { signal: signal() }));
    expect(parts.slice(0, 3)).toEqual([
      { type: 'tool_call_start', id: 't1', name: 'write_note' },
      { type: 'tool_call_delta', id: 't1', argsText: '"hello world"' },
      { type: 'tool_call_end', id: 't1' },
    ]);
  });

  it('leaves provider-executed tool calls out of the stream and out of generate', async () => {
    const hosted = { type: 'tool-call', toolCallId: 'h1', toolName: 'web_search', input: '{}', providerExecuted: true } as const;
    const streamed = scriptedModel({
      stream: [
        { type: 'tool-input-start', id: 'h1', toolName: 'web_search', providerExecuted: true },
        { type: 'tool-input-delta', id: 'h1', delta: '{}' },
        { type: 'tool-input-end', id: 'h1' },
        hosted,
        finish,
      ],
    });
    const { parts } = await drain(fromAISDK(streamed).stream!(request(userAsks), { signal: signal() }));
    expect(parts.map((p) => p.type)).toEqual(['finish']);

    const generated = scriptedModel({ generate: { content: [hosted, { type: 'text', text: 'Found it.' }] } });
    const response = await fromAISDK(generated).generate(request(userAsks), { signal: signal() });
    expect(response.toolCalls).toEqual([]);
  });

  it('throws the error part of a stream as a ModelCallError', async () => {
    const model = scriptedModel({
      stream: [
        { type: 'text-delta', id: 'x', delta: 'a' },
        { type: 'error', error: { message: 'overloaded', type: 'overloaded_error' } },
      ],
    });
    const { parts, error } = await drain(fromAISDK(model).stream!(request(userAsks), { signal: signal() }));
    expect(parts).toEqual([{ type: 'text_delta', text: 'a' }]);
    expect((error as ModelCallError).turnError).toEqual({
      kind: 'provider_error',
      message: 'The model provider reported an error: overloaded.',
      retryable: false,
      data: { message: 'overloaded', type: 'overloaded_error' },
    });
  });
});

describe('generate mapping beyond the OpenAI-compatible provider', () => {
  it('joins text parts, joins reasoning parts, and falls back to the model id', async () => {
    const model = scriptedModel({
      generate: {
        content: [
          { type: 'reasoning', text: 'step 1; ' },
          { type: 'text', text: 'Hello ' },
          { type: 'reasoning', text: 'step 2' },
          { type: 'text', text: 'world' },
        ],
      },
    });
    const response = await fromAISDK(model).generate(request(userAsks), { signal: signal() });
    expect(response).toEqual({
      text: 'Hello world',
      reasoning: 'step 1; step 2',
      toolCalls: [],
      usage: { cost: 0 },
      finishReason: 'stop',
      modelId: 'scripted-1',
    });
  });

  it('passes the abort signal, the tools and the tool choice to the provider', async () => {
    const model = scriptedModel({});
    const controller = new AbortController();
    await fromAISDK(model).generate(request(userAsks), { signal: controller.signal });
    const options = model.calls[0]!;
    expect(options.abortSignal).toBe(controller.signal);
    expect(options.toolChoice).toEqual({ type: 'auto' });
    expect(options.tools).toEqual([
      {
        type: 'function',
        name: 'get_weather',
        description: 'Current weather for a city.',
        inputSchema: request([]).tools[0]!.inputSchema,
      },
    ]);
  });
});

describe('toPrompt', () => {
  it('maps every role, groups consecutive tool results and marks error results', () => {
    const messages: Message[] = [
      ...userAsks,
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'a', name: 'f', input: { x: 1 } },
          { id: 'b', name: 'f', input: '{x', inputError: 'bad JSON' },
        ],
      },
      { role: 'tool', result: { callId: 'a', name: 'f', output: [1, 2], isError: false } },
      { role: 'tool', result: { callId: 'b', name: 'f', output: { code: 'E_ARGS' }, isError: true } },
      { role: 'user', content: 'and?' },
      { role: 'tool', result: { callId: 'c', name: 'f', output: 'boom', isError: true } },
    ];
    expect(toPrompt(messages)).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'a', toolName: 'f', input: { x: 1 } },
          { type: 'tool-call', toolCallId: 'b', toolName: 'f', input: { rawInvalidInput: '{x' } },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'a', toolName: 'f', output: { type: 'json', value: [1, 2] } },
          { type: 'tool-result', toolCallId: 'b', toolName: 'f', output: { type: 'error-json', value: { code: 'E_ARGS' } } },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'and?' }] },
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'c', toolName: 'f', output: { type: 'error-text', value: 'boom' } }],
      },
    ]);
  });

  it('rejects an unknown role with a ModelCallError from generate, naming the role', async () => {
    const model = scriptedModel({});
    const bad = [{ role: 'robot', content: 'hi' }] as unknown as Message[];
    const error = await fromAISDK(model)
      .generate(request(bad), { signal: signal() })
      .catch((e: unknown) => e);
    expect((error as ModelCallError).turnError).toMatchObject({ kind: 'invalid_request', retryable: false });
    expect((error as ModelCallError).turnError.message).toContain('"robot"');
    expect(model.calls).toHaveLength(0);
  });
});

describe('fromAISDKError', () => {
  const apiError = (statusCode: number, isRetryable: boolean) =>
    new APICallError({ message: 'nope', url: 'http://x/v1/chat/completions', requestBodyValues: {}, statusCode, isRetryable });

  it("takes retryable from the provider's own flag, not from the status code", () => {
    expect(fromAISDKError(apiError(429, false))).toMatchObject({
      kind: 'rate_limited',
      retryable: false,
      data: { statusCode: 429 },
    });
    expect(fromAISDKError(apiError(400, true))).toMatchObject({
      kind: 'provider_error',
      retryable: true,
      data: { statusCode: 400 },
    });
  });

  it('keeps the turnError an error already carries', () => {
    const turnError = { kind: 'custom', message: 'Custom failure.' };
    expect(fromAISDKError(new ModelCallError(turnError))).toBe(turnError);
    expect(fromAISDKError(Object.assign(new Error('x'), { turnError }))).toBe(turnError);
  });

  it('maps plain errors, abort errors and non-errors to sentences', () => {
    expect(fromAISDKError(new TypeError('fetch failed.'))).toEqual({
      kind: 'provider_error',
      message: 'The model call failed: fetch failed.',
      retryable: false,
    });
    expect(fromAISDKError(new DOMException('stop', 'AbortError')).kind).toBe('aborted');
    expect(fromAISDKError(42)).toEqual({
      kind: 'provider_error',
      message: 'The model call failed with a non-error value: 42.',
      retryable: false,
    });
  });
});

describe('fromAISDK arguments', () => {
  it('rejects a model that is not a LanguageModelV3, saying what it got', () => {
    const v2 = { ...scriptedModel({}), specificationVersion: 'v2' } as unknown as LanguageModelV3;
    expect(() => fromAISDK(v2)).toThrow(/specificationVersion 'v3'.*'v2'/);
    expect(() => fromAISDK('gpt-4o' as unknown as LanguageModelV3)).toThrow(/the string 'gpt-4o'/);
  });

  it("rejects the removed retry options, pointing at the interpreter's maxModelRetries", () => {
    // Cast: the options are gone from the type; plain JavaScript callers can still pass them.
    const removed = (options: object) => () => fromAISDK(scriptedModel({}), options as FromAISDKOptions);
    expect(removed({ maxRetries: 3 })).toThrow(/'maxRetries' was removed.*maxModelRetries.*runTurn or streamTurn/);
    expect(removed({ retryDelay: () => 0 })).toThrow(/'retryDelay' was removed/);
  });

  it('fails the call when resolve returns something that is not a model', async () => {
    const model = fromAISDK(scriptedModel({}), { resolve: () => ({}) as LanguageModelV3 });
    const error = await model.generate(request(userAsks, { modelOverride: 'x' }), { signal: signal() }).catch((e: unknown) => e);
    expect((error as ModelCallError).turnError.kind).toBe('invalid_model_override');
  });
});
