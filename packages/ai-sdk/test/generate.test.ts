import type { Message } from '@turnkit/core';
import { fromAISDK } from '@turnkit/ai-sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { completion, errorReply, FAKE_MODEL, type FakeOpenAIServer, startFakeOpenAIServer } from '@turnkit/testing';
import { languageModelFor, providerFor, rejection, request, signal, userAsks, weatherTool } from './setup.js';

let server: FakeOpenAIServer;
beforeEach(async () => {
  server = await startFakeOpenAIServer();
});
afterEach(async () => {
  await server.close();
});

describe('generate: response mapping', () => {
  it('maps text, usage, finish reason and the response model id', async () => {
    server.reply(completion({ content: 'Sunny, 21°C.', usage: { prompt: 12, completion: 5 }, model: 'fake-model-1-2025' }));
    const response = await fromAISDK(languageModelFor(server)).generate(request(userAsks), { signal: signal() });
    expect(response).toEqual({
      text: 'Sunny, 21°C.',
      toolCalls: [],
      usage: { inputTokens: 12, outputTokens: 5, totalTokens: 17, cost: 0 },
      finishReason: 'stop',
      modelId: 'fake-model-1-2025',
    });
  });

  it('sends the prompt, the tools and tool_choice auto to the server', async () => {
    server.reply(completion({ content: 'ok' }));
    await fromAISDK(languageModelFor(server)).generate(request(userAsks), { signal: signal() });
    expect(server.requests).toHaveLength(1);
    const sent = server.requests[0]!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer test-key');
    expect(sent.body.model).toBe(FAKE_MODEL);
    expect(sent.body.messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Weather in Paris?' },
    ]);
    expect(sent.body.tools).toEqual([
      {
        type: 'function',
        function: { name: 'get_weather', description: weatherTool.description, parameters: weatherTool.inputSchema },
      },
    ]);
    expect(sent.body.tool_choice).toBe('auto');
    expect(sent.body.stream).toBeUndefined();
  });

  it('maps reasoning content', async () => {
    server.reply(completion({ reasoning: 'Paris is in France.', content: 'Sunny.' }));
    const response = await fromAISDK(languageModelFor(server)).generate(request(userAsks), { signal: signal() });
    expect(response.reasoning).toBe('Paris is in France.');
    expect(response.text).toBe('Sunny.');
  });

  it('maps tool calls with parsed input and the tool-calls finish reason', async () => {
    server.reply(
      completion({
        toolCalls: [
          { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { id: 'call_2', name: 'get_weather', arguments: '{"city":"Oslo"}' },
        ],
      }),
    );
    const response = await fromAISDK(languageModelFor(server)).generate(request(userAsks), { signal: signal() });
    expect(response.finishReason).toBe('tool-calls');
    expect(response.toolCalls).toEqual([
      { id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      { id: 'call_2', name: 'get_weather', input: { city: 'Oslo' } },
    ]);
  });

  it('keeps malformed tool arguments as raw text with an inputError, and reads empty arguments as {}', async () => {
    server.reply(
      completion({
        toolCalls: [
          { id: 'call_bad', name: 'get_weather', arguments: '{"city": Par' },
          { id: 'call_empty', name: 'get_weather', arguments: '' },
        ],
      }),
    );
    const response = await fromAISDK(languageModelFor(server)).generate(request(userAsks), { signal: signal() });
    const [bad, empty] = response.toolCalls;
    expect(bad?.input).toBe('{"city": Par');
    expect(bad?.inputError).toMatch(/call_bad.*get_weather.*not valid JSON/);
    expect(empty).toEqual({ id: 'call_empty', name: 'get_weather', input: {} });
  });

  it('maps the length finish reason', async () => {
    server.reply(completion({ content: 'Sunny and', finishReason: 'length' }));
    const response = await fromAISDK(languageModelFor(server)).generate(request(userAsks), { signal: signal() });
    expect(response.finishReason).toBe('length');
  });
});

describe('generate: request mapping', () => {
  const transcript: readonly Message[] = [
    ...userAsks,
    {
      role: 'assistant',
      content: 'Checking.',
      reasoning: 'Need the weather tool.',
      toolCalls: [
        { id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
        { id: 'call_2', name: 'get_weather', input: { city: 'Oslo' } },
        { id: 'call_3', name: 'get_weather', input: '{"city": Par', inputError: 'not valid JSON' },
      ],
    },
    { role: 'tool', result: { callId: 'call_1', name: 'get_weather', output: { tempC: 21 }, isError: false } },
    { role: 'tool', result: { callId: 'call_2', name: 'get_weather', output: 'Snow.', isError: false } },
    {
      role: 'tool',
      result: { callId: 'call_3', name: 'get_weather', output: 'The arguments were not valid JSON.', isError: true },
    },
  ];

  it('sends assistant tool calls and every tool result to the server', async () => {
    server.reply(completion({ content: 'Paris 21°C, Oslo snowing.' }));
    await fromAISDK(languageModelFor(server)).generate(request(transcript), { signal: signal() });
    const messages = server.requests[0]!.body.messages;
    expect(messages.slice(2)).toEqual([
      {
        role: 'assistant',
        content: 'Checking.',
        reasoning_content: 'Need the weather tool.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
          // The raw text is not JSON: it goes wrapped in an object, which every provider accepts.
          {
            id: 'call_3',
            type: 'function',
            function: { name: 'get_weather', arguments: JSON.stringify({ rawInvalidInput: '{"city": Par' }) },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"tempC":21}' },
      { role: 'tool', tool_call_id: 'call_2', content: 'Snow.' },
      { role: 'tool', tool_call_id: 'call_3', content: 'The arguments were not valid JSON.' },
    ]);
  });

  it('sends neither tools nor tool_choice on a forced final call (tools empty, toolChoice none)', async () => {
    server.reply(completion({ content: 'Final answer.' }));
    await fromAISDK(languageModelFor(server)).generate(request(transcript, { tools: [], toolChoice: 'none', iteration: 3 }), {
      signal: signal(),
    });
    const body = server.requests[0]!.body;
    expect(body.tools).toBeUndefined();
    expect(body.tool_choice).toBeUndefined();
    expect(body.messages).toHaveLength(6);
  });

  it("sends tool_choice 'none' when tools are listed but disabled", async () => {
    server.reply(completion({ content: 'No tools.' }));
    await fromAISDK(languageModelFor(server)).generate(request(userAsks, { toolChoice: 'none' }), { signal: signal() });
    expect(server.requests[0]!.body.tool_choice).toBe('none');
    expect(server.requests[0]!.body.tools).toHaveLength(1);
  });

  it('passes call settings through', async () => {
    server.reply(completion({ content: 'ok' }));
    await fromAISDK(languageModelFor(server), { settings: { temperature: 0, maxOutputTokens: 64, seed: 7 } }).generate(
      request(userAsks),
      { signal: signal() },
    );
    expect(server.requests[0]!.body).toMatchObject({ temperature: 0, max_tokens: 64, seed: 7 });
  });
});

describe('generate: model overrides', () => {
  it('uses resolve(modelOverride) for the call', async () => {
    server.reply(completion({ content: 'from the big model' }));
    const provider = providerFor(server);
    const model = fromAISDK(provider.chatModel('small'), { resolve: (id) => provider.chatModel(id) });
    await model.generate(request(userAsks, { modelOverride: 'big' }), { signal: signal() });
    expect(server.requests[0]!.body.model).toBe('big');
  });

  it('ignores the override without resolve', async () => {
    server.reply(completion({ content: 'ok' }));
    await fromAISDK(providerFor(server).chatModel('small')).generate(request(userAsks, { modelOverride: 'big' }), {
      signal: signal(),
    });
    expect(server.requests[0]!.body.model).toBe('small');
  });

  it('fails with invalid_model_override when resolve throws, without calling the provider', async () => {
    const model = fromAISDK(languageModelFor(server), {
      resolve: (id) => {
        throw new Error(`unknown model ${id}`);
      },
    });
    const error = await rejection(model.generate(request(userAsks, { modelOverride: 'nope' }), { signal: signal() }));
    expect(error.turnError).toMatchObject({ kind: 'invalid_model_override', retryable: false, data: { modelOverride: 'nope' } });
    expect(error.turnError.message).toContain("'nope'");
    expect(server.requests).toHaveLength(0);
  });
});

describe('generate: errors and retries', () => {
  it('maps a 429 to rate_limited with the provider retry flag, and the next call succeeds', async () => {
    server.reply(errorReply(429, 'Rate limit reached for requests', { 'retry-after-ms': '1500' }), completion({ content: 'ok' }));
    const model = fromAISDK(languageModelFor(server));
    const error = await rejection(model.generate(request(userAsks), { signal: signal() }));
    expect(error.turnError).toMatchObject({
      kind: 'rate_limited',
      retryable: true,
      data: { statusCode: 429, retryAfterMs: 1500 },
    });
    expect(error.turnError.message).toContain('HTTP 429');
    expect(error.turnError.message).toContain('Rate limit reached for requests');
    expect(error.message).toBe(error.turnError.message);
    const response = await model.generate(request(userAsks), { signal: signal() });
    expect(response.text).toBe('ok');
    expect(server.requests).toHaveLength(2);
  });

  it("makes exactly one request per call: a 500 is thrown, not retried (retries are the interpreter's)", async () => {
    server.reply(errorReply(500, 'upstream exploded'), completion({ content: 'not reached' }));
    const error = await rejection(fromAISDK(languageModelFor(server)).generate(request(userAsks), { signal: signal() }));
    expect(error.turnError).toMatchObject({ kind: 'provider_error', retryable: true, data: { statusCode: 500 } });
    expect(error.turnError.message).toMatch(/HTTP 500.*upstream exploded.*Retrying may succeed/);
    expect(server.requests).toHaveLength(1);
  });

  it('reads Retry-After in seconds or as an HTTP date into retryAfterMs', async () => {
    server.reply(
      errorReply(429, 'slow down', { 'retry-after': '3' }),
      errorReply(503, 'overloaded', { 'retry-after': new Date(Date.now() + 3_600_000).toUTCString() }),
    );
    const model = fromAISDK(languageModelFor(server));
    const seconds = await rejection(model.generate(request(userAsks), { signal: signal() }));
    expect(seconds.turnError.data).toEqual({ statusCode: 429, retryAfterMs: 3000 });
    const date = await rejection(model.generate(request(userAsks), { signal: signal() }));
    const hinted = (date.turnError.data as { retryAfterMs: number }).retryAfterMs;
    // An HTTP date has one-second resolution and the clock moves between writing and reading it.
    expect(hinted).toBeGreaterThan(3_500_000);
    expect(hinted).toBeLessThanOrEqual(3_600_000);
  });

  it('does not retry a 400, which the provider marks not retryable', async () => {
    server.reply(errorReply(400, 'Unknown parameter: foo'));
    const model = fromAISDK(languageModelFor(server));
    const error = await rejection(model.generate(request(userAsks), { signal: signal() }));
    expect(error.turnError).toMatchObject({ kind: 'provider_error', retryable: false, data: { statusCode: 400 } });
    expect(server.requests).toHaveLength(1);
  });

  it('maps an unreachable server to a retryable provider_error', async () => {
    const model = fromAISDK(languageModelFor(server));
    await server.close();
    const error = await rejection(model.generate(request(userAsks), { signal: signal() }));
    expect(error.turnError).toMatchObject({ kind: 'provider_error', retryable: true });
    expect(error.turnError.message).toContain('could not be reached');
    server = await startFakeOpenAIServer();
  });

  it('maps a body that is not a completion to provider_error', async () => {
    server.reply({ type: 'json', body: { unexpected: true } });
    const error = await rejection(fromAISDK(languageModelFor(server)).generate(request(userAsks), { signal: signal() }));
    expect(error.turnError).toMatchObject({ kind: 'provider_error', retryable: false });
  });
});

describe('generate: abort', () => {
  it('aborts a call in flight and closes the connection', async () => {
    server.reply({ type: 'hang' });
    const controller = new AbortController();
    const pending = rejection(fromAISDK(languageModelFor(server)).generate(request(userAsks), { signal: controller.signal }));
    await server.waitForRequests(1);
    controller.abort(new Error('user pressed stop'));
    const error = await pending;
    expect(error.turnError).toEqual({
      kind: 'aborted',
      message: 'The model call was aborted by its abort signal: user pressed stop.',
      retryable: false,
    });
    await server.waitForDisconnects(1);
  });

  it('does not call the provider with an already aborted signal', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await rejection(fromAISDK(languageModelFor(server)).generate(request(userAsks), { signal: controller.signal }));
    expect(error.turnError.kind).toBe('aborted');
    expect(server.requests).toHaveLength(0);
  });
});
