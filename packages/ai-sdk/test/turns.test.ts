// Whole turns over HTTP: fromAISDK(createOpenAICompatible(...)(model)) against the fake Chat
// Completions server, under runTurn (JSON replies to `generate`) and streamTurn (SSE replies to
// `stream`). Everything the interpreters see came through the provider package.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { fromAISDK, type FromAISDKOptions } from '@turnkit/ai-sdk';
import type { Model } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import { runTurn, type RunTurnOptions, type TurnResult } from '@turnkit/inline';
import { streamTurn, type TurnStream, type TurnStreamEvent } from '@turnkit/stream';
import { transcriptLines } from '@turnkit/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { chunk, errorReply, FAKE_MODEL, type FakeOpenAIServer, sse, startFakeOpenAIServer } from '@turnkit/testing';
import { type Wire, wireReply } from './wire.js';

let server: FakeOpenAIServer;
let executed: string[];
beforeEach(async () => {
  server = await startFakeOpenAIServer();
  executed = [];
});
afterEach(async () => {
  await server.close();
});

const weather = defineTool({
  name: 'get_weather',
  description: 'Current weather for a city.',
  input: z.object({ city: z.string() }),
  readOnly: true,
  execute: ({ city }) => {
    executed.push(`get_weather ${city}`);
    return { city, tempC: city === 'Paris' ? 18 : 4 };
  },
});

const escalate = defineTool({
  name: 'escalate',
  description: 'Hands the next answer to a bigger model.',
  input: z.object({}),
  readOnly: true,
  model: 'big-model',
  execute: () => {
    executed.push('escalate');
    return 'escalated';
  },
});

function provider() {
  return createOpenAICompatible({ name: 'fake', baseURL: server.baseURL, apiKey: 'test-key', includeUsage: true });
}

function model(options: FromAISDKOptions = {}): Model {
  return fromAISDK(provider()(FAKE_MODEL), options);
}

/** Reads every event as a consumer would, then returns the result and the events. */
async function readToEnd(stream: TurnStream<TurnResult>): Promise<TurnResult & { readonly events: TurnStreamEvent[] }> {
  const events: TurnStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return { ...(await stream.result), events };
}

interface Interpreter {
  readonly name: string;
  /** What the adapter asks the server for under this interpreter. */
  readonly wire: Wire;
  run(options: RunTurnOptions): Promise<TurnResult>;
}

const interpreters: readonly Interpreter[] = [
  { name: 'runTurn', wire: 'json', run: (options) => runTurn(options) },
  { name: 'streamTurn', wire: 'sse', run: (options) => readToEnd(streamTurn(options)) },
];

const USER = 'user: Weather in Paris?';
const askParis = { system: 'You are terse.', input: 'Weather in Paris?' } as const;
const parisCall = { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' };

describe.each(interpreters)('a turn over HTTP under $name', ({ wire, run }) => {
  it('runs one tool round then answers; the second request carries the tool result', async () => {
    server.reply(
      wireReply(wire, { toolCalls: [parisCall], usage: { prompt: 20, completion: 7 } }),
      wireReply(wire, { text: 'It is 18 °C in Paris.', usage: { prompt: 40, completion: 9 } }),
    );
    const result = await run({ model: model(), tools: [weather], ...askParis });

    expect(result).toMatchObject({
      status: 'stopped',
      stopReason: 'completed',
      output: 'It is 18 °C in Paris.',
      text: 'It is 18 °C in Paris.',
    });
    expect(transcriptLines(result.transcript)).toEqual([
      'system: You are terse.',
      USER,
      'assistant: [call_1 get_weather]',
      'tool call_1 get_weather: ok {"city":"Paris","tempC":18}',
      'assistant: It is 18 °C in Paris.',
    ]);
    expect(result.usage).toMatchObject({ inputTokens: 60, outputTokens: 16, totalTokens: 76, modelCalls: 2, toolCalls: 1 });
    expect(executed).toEqual(['get_weather Paris']);

    const [first, second] = server.requests.map((r) => r.body);
    expect(first.stream === true).toBe(wire === 'sse');
    expect(first.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['get_weather']);
    expect(second.messages.at(-2)).toMatchObject({
      role: 'assistant',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
    });
    expect(second.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_1', content: '{"city":"Paris","tempC":18}' });
    expect(server.requests).toHaveLength(2);
  });

  it('gives a call whose arguments are not JSON an inputError, never runs it, and sends the model an error result', async () => {
    const broken = { id: 'call_1', name: 'get_weather', arguments: '{"city": "Par' };
    server.reply(wireReply(wire, { toolCalls: [broken] }), wireReply(wire, { text: 'Sorry, let me retry.' }));
    const result = await run({ model: model(), tools: [weather], ...askParis });

    expect(result).toMatchObject({ status: 'stopped', stopReason: 'completed', text: 'Sorry, let me retry.' });
    const assistant = result.transcript[2];
    expect(assistant?.role === 'assistant' && assistant.toolCalls[0]).toMatchObject({
      id: 'call_1',
      input: '{"city": "Par',
      inputError: expect.stringMatching(/'call_1'.*not valid JSON/),
    });
    expect(transcriptLines(result.transcript)[3]).toMatch(/^tool call_1 get_weather: error .*not valid JSON/);
    expect(executed).toEqual([]);

    const messages = server.requests[1]!.body.messages;
    // What the model wrote goes back wrapped in an object (providers such as Anthropic reject any other input).
    expect(JSON.parse(messages.at(-2).tool_calls[0].function.arguments)).toEqual({ rawInvalidInput: '{"city": "Par' });
    expect(messages.at(-1)).toMatchObject({
      role: 'tool',
      tool_call_id: 'call_1',
      content: expect.stringMatching(/not valid JSON/),
    });
  });

  it("retries a 429 (the interpreter's maxModelRetries, default 2) and completes", async () => {
    server.reply(errorReply(429, 'Rate limit reached', { 'retry-after-ms': '20' }), wireReply(wire, { text: 'ok' }));
    const result = await run({ model: model(), ...askParis, modelRetryBackoffMs: 0 });
    expect(result).toMatchObject({ status: 'stopped', output: 'ok' });
    expect(server.requests).toHaveLength(2);
    expect(transcriptLines(result.transcript)).toEqual(['system: You are terse.', USER, 'assistant: ok']);
  });

  it('fails with rate_limited, retryable, on a 429 when maxModelRetries is 0', async () => {
    server.reply(errorReply(429, 'Rate limit reached', { 'retry-after-ms': '20' }), wireReply(wire, { text: 'not reached' }));
    const result = await run({ model: model(), ...askParis, maxModelRetries: 0 });
    expect(result).toMatchObject({
      status: 'failed',
      error: { kind: 'rate_limited', retryable: true, data: { statusCode: 429, retryAfterMs: 20 } },
    });
    expect(result.error?.message).toMatch(/HTTP 429.*Rate limit reached/);
    expect(server.requests).toHaveLength(1);
  });

  it('fails with provider_error on a 500 once the retries are used up', async () => {
    server.reply(
      errorReply(500, 'upstream exploded'),
      errorReply(500, 'upstream exploded'),
      errorReply(500, 'upstream exploded'),
    );
    const result = await run({ model: model(), ...askParis, modelRetryBackoffMs: 0 });
    expect(result).toMatchObject({
      status: 'failed',
      error: { kind: 'provider_error', retryable: true, data: { statusCode: 500 } },
    });
    expect(result.error?.message).toMatch(/HTTP 500.*upstream exploded/);
    expect(server.requests).toHaveLength(3);
    expect(transcriptLines(result.transcript)).toEqual(['system: You are terse.', USER]);
  });

  it('does not retry a 400, which the provider marks not retryable', async () => {
    server.reply(errorReply(400, 'Unknown parameter: foo'), wireReply(wire, { text: 'not reached' }));
    const result = await run({ model: model(), ...askParis, modelRetryBackoffMs: 0 });
    expect(result).toMatchObject({
      status: 'failed',
      error: { kind: 'provider_error', retryable: false, data: { statusCode: 400 } },
    });
    expect(server.requests).toHaveLength(1);
  });

  it('fails with provider_error, without retrying, on a reply it cannot parse', async () => {
    server.reply(
      wire === 'json' ? { type: 'json', body: { unexpected: true } } : sse([chunk.role(), chunk.text('Hel'), '{not json']),
      wireReply(wire, { text: 'not reached' }),
    );
    const result = await run({ model: model(), ...askParis, modelRetryBackoffMs: 0 });
    expect(result).toMatchObject({ status: 'failed', error: { kind: 'provider_error', retryable: false } });
    expect(server.requests).toHaveLength(1);
  });

  it('makes the last call without tools when maxIterations is reached', async () => {
    server.reply(wireReply(wire, { toolCalls: [parisCall] }), wireReply(wire, { text: '18 °C.' }));
    const result = await run({ model: model(), tools: [weather], ...askParis, limits: { maxIterations: 1 } });

    expect(result).toMatchObject({ status: 'stopped', stopReason: 'max_iterations', output: '18 °C.' });
    const [first, last] = server.requests.map((r) => r.body);
    expect(first.tools).toHaveLength(1);
    expect(last).not.toHaveProperty('tools');
    expect(last).not.toHaveProperty('tool_choice');
    expect(last.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_1' });
  });

  it("sends the call after a tool's modelOverride to the resolved model, once", async () => {
    server.reply(
      wireReply(wire, { toolCalls: [{ id: 'call_1', name: 'escalate', arguments: '{}' }] }),
      wireReply(wire, { toolCalls: [{ ...parisCall, id: 'call_2' }], model: 'big-model' }),
      wireReply(wire, { text: '18 °C.' }),
    );
    const result = await run({
      model: model({ resolve: (modelId) => provider()(modelId) }),
      tools: [weather, escalate],
      ...askParis,
    });

    expect(result.error).toBeUndefined();
    expect(result).toMatchObject({ status: 'stopped', output: '18 °C.' });
    expect(server.requests.map((r) => r.body.model)).toEqual([FAKE_MODEL, 'big-model', FAKE_MODEL]);
    expect(executed).toEqual(['escalate', 'get_weather Paris']);
  });

  it('stops with budget_exhausted when the reported usage exceeds the token budget, without running the calls', async () => {
    server.reply(
      wireReply(wire, { toolCalls: [parisCall], usage: { prompt: 8, completion: 5 } }),
      wireReply(wire, { text: 'not reached' }),
    );
    const result = await run({ model: model(), tools: [weather], ...askParis, limits: { budget: { maxTotalTokens: 10 } } });

    expect(result).toMatchObject({
      status: 'stopped',
      stopReason: 'budget_exhausted',
      output: null,
      usage: { inputTokens: 8, outputTokens: 5, totalTokens: 13 },
    });
    expect(transcriptLines(result.transcript).at(-1)).toMatch(
      /^tool call_1 get_weather: error not executed: .*total token budget/,
    );
    expect(executed).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });
});

describe.each(interpreters)('pricing under $name: real cost in usage, so maxCost stops a turn', ({ wire, run }) => {
  // $1,000 per million input tokens and $2,000 per million output tokens: 20 + 7 tokens cost 0.034.
  const pricing = {
    [FAKE_MODEL]: { inputPerMillion: 1000, outputPerMillion: 2000 },
    'big-model': { inputPerMillion: 5000, outputPerMillion: 5000 },
  };

  it('reports cost = input × inputPerMillion / 1e6 + output × outputPerMillion / 1e6 over the turn', async () => {
    server.reply(
      wireReply(wire, { toolCalls: [parisCall], usage: { prompt: 20, completion: 7 } }),
      wireReply(wire, { text: '18 °C.', usage: { prompt: 40, completion: 9 } }),
    );
    const result = await run({ model: model({ pricing }), tools: [weather], ...askParis });
    expect(result.status).toBe('stopped');
    expect(result.usage.cost).toBeCloseTo(0.034 + 0.058, 12);
  });

  it('maxCost stops the turn once the priced usage passes it, without running the calls', async () => {
    server.reply(
      wireReply(wire, { toolCalls: [parisCall], usage: { prompt: 20, completion: 7 } }),
      wireReply(wire, { toolCalls: [{ ...parisCall, id: 'call_2' }], usage: { prompt: 40, completion: 9 } }),
      wireReply(wire, { text: 'not reached' }),
    );
    const result = await run({ model: model({ pricing }), tools: [weather], ...askParis, limits: { budget: { maxCost: 0.05 } } });

    expect(result).toMatchObject({ status: 'stopped', stopReason: 'budget_exhausted', output: null });
    expect(result.usage.cost).toBeCloseTo(0.092, 12);
    expect(transcriptLines(result.transcript).at(-1)).toMatch(/^tool call_2 get_weather: error not executed: .*cost budget/);
    expect(executed).toEqual(['get_weather Paris']);
    expect(server.requests).toHaveLength(2);
  });

  it('prices a model override at its own price, and refuses to call an override with no price', async () => {
    server.reply(
      wireReply(wire, { toolCalls: [{ id: 'call_1', name: 'escalate', arguments: '{}' }], usage: { prompt: 10, completion: 0 } }),
      wireReply(wire, { text: 'done', usage: { prompt: 100, completion: 100 }, model: 'big-model' }),
    );
    const priced = await run({ model: model({ pricing, resolve: (id) => provider()(id) }), tools: [escalate], ...askParis });
    expect(priced.usage.cost).toBeCloseTo(0.01 + 1, 12);

    server.reply(wireReply(wire, { toolCalls: [{ id: 'call_1', name: 'escalate', arguments: '{}' }] }));
    const unpriced = await run({
      model: model({ pricing: { [FAKE_MODEL]: pricing[FAKE_MODEL] }, resolve: (id) => provider()(id) }),
      tools: [escalate],
      ...askParis,
    });
    expect(unpriced.error).toMatchObject({
      kind: 'unpriced_model',
      message: expect.stringContaining("The model 'big-model' has no price"),
    });
    expect(server.requests.map((r) => r.body.model)).toEqual([FAKE_MODEL, 'big-model', FAKE_MODEL]);
  });
});

describe('fromAISDK pricing option', () => {
  it.each<[string, unknown, string]>([
    ['not an object', 5, 'pricing must be an object of prices by model id'],
    [
      'a price that is not an object',
      { [FAKE_MODEL]: 3 },
      `pricing["${FAKE_MODEL}"] must be an object { inputPerMillion, outputPerMillion }; got 3`,
    ],
    [
      'a negative price',
      { [FAKE_MODEL]: { inputPerMillion: -1, outputPerMillion: 1 } },
      `pricing["${FAKE_MODEL}"].inputPerMillion must be a finite number >= 0`,
    ],
    [
      'a missing price',
      { [FAKE_MODEL]: { inputPerMillion: 1 } },
      `pricing["${FAKE_MODEL}"].outputPerMillion must be a finite number >= 0 (the price of a million output tokens); got undefined`,
    ],
    ['a price in text', { [FAKE_MODEL]: { inputPerMillion: '2.5', outputPerMillion: 1 } }, "got '2.5'"],
    ['an unknown key', { [FAKE_MODEL]: { inputPerMillion: 1, outputPerMillion: 1, perRequest: 1 } }, "unknown key 'perRequest'"],
    [
      'no price for the model itself',
      { 'gpt-4o': { inputPerMillion: 1, outputPerMillion: 1 } },
      `pricing has no price for the model '${FAKE_MODEL}' (it prices 'gpt-4o')`,
    ],
  ])('refuses %s with an error that names it', (_name, pricing, message) => {
    expect(() => model({ pricing: pricing as never })).toThrow(message);
  });
});

describe('parallel calls with arguments split across chunks', () => {
  const calls = [
    { id: 'call_a', name: 'get_weather', arguments: '{"city": "Paris"}' },
    { id: 'call_b', name: 'get_weather', arguments: '{"city": "Oslo"}' },
  ];
  // The two calls' argument pieces interleave, as a server may send them for parallel calls.
  const streamed = sse([
    chunk.role(),
    chunk.text('Checking '),
    chunk.text('both.'),
    chunk.toolCallStart(0, 'call_a', 'get_weather', '{"ci'),
    chunk.toolCallArgs(0, 'ty": "Pa'),
    chunk.toolCallStart(1, 'call_b', 'get_weather'),
    chunk.toolCallArgs(1, '{"city"'),
    chunk.toolCallArgs(0, 'ris"}'),
    chunk.toolCallArgs(1, ': "Oslo"}'),
    chunk.finish('tool_calls'),
    chunk.usage({ prompt: 30, completion: 20 }),
  ]);
  const expected = [
    'system: You are terse.',
    'user: Weather in Paris and Oslo?',
    'assistant: Checking both. [call_a get_weather, call_b get_weather]',
    'tool call_a get_weather: ok {"city":"Paris","tempC":18}',
    'tool call_b get_weather: ok {"city":"Oslo","tempC":4}',
    'assistant: Paris 18 °C, Oslo 4 °C.',
  ];
  const options = () => ({ model: model(), tools: [weather], system: 'You are terse.', input: 'Weather in Paris and Oslo?' });

  it('gives the same transcript under runTurn (JSON) and streamTurn (SSE)', async () => {
    server.reply(
      wireReply('json', { text: 'Checking both.', toolCalls: calls, usage: { prompt: 30, completion: 20 } }),
      wireReply('json', { text: 'Paris 18 °C, Oslo 4 °C.' }),
    );
    const inline = await runTurn(options());
    server.reply(streamed, wireReply('sse', { text: 'Paris 18 °C, Oslo 4 °C.' }, 3));
    const streamedResult = await readToEnd(streamTurn(options()));

    expect(transcriptLines(inline.transcript)).toEqual(expected);
    expect(streamedResult.transcript).toEqual(inline.transcript);
    expect(streamedResult.outcome).toEqual(inline.outcome);
    expect(streamedResult.usage).toEqual(inline.usage);
    expect(executed.sort()).toEqual(['get_weather Oslo', 'get_weather Oslo', 'get_weather Paris', 'get_weather Paris']);
    // The reader saw each call once, complete, and the text as it came.
    const toolCallEvents = streamedResult.events.filter((e) => e.type === 'tool_call');
    expect(toolCallEvents.map((e) => e.call)).toEqual([
      { id: 'call_a', name: 'get_weather', input: { city: 'Paris' } },
      { id: 'call_b', name: 'get_weather', input: { city: 'Oslo' } },
    ]);
    const text = streamedResult.events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : []));
    expect(text.slice(-3)).toEqual(['Oslo ', '4 ', '°C.']);
  });
});

describe('cancelling a turn mid-call', () => {
  it('runTurn: an abort while the server has not answered cancels the turn and closes the connection', async () => {
    server.reply({ type: 'hang' });
    const controller = new AbortController();
    const pending = runTurn({ model: model(), ...askParis, signal: controller.signal });
    await server.waitForRequests(1);
    controller.abort('the user pressed stop');
    const result = await pending;

    expect(result).toMatchObject({ status: 'cancelled', reason: 'the user pressed stop' });
    await server.waitForDisconnects(1);
    expect(server.disconnects).toBe(1);
    expect(server.requests).toHaveLength(1);
  });

  it('streamTurn: an abort after the first streamed text cancels the turn and closes the connection', async () => {
    server.reply(sse([chunk.role(), chunk.text('It is ')], { done: false, hold: true }));
    const controller = new AbortController();
    const stream = streamTurn({ model: model(), ...askParis, signal: controller.signal });
    const events: TurnStreamEvent[] = [];
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'text_delta') controller.abort('the user pressed stop');
    }
    const result = await stream.result;

    expect(events.filter((e) => e.type === 'text_delta')).toEqual([{ type: 'text_delta', text: 'It is ' }]);
    expect(result).toMatchObject({ status: 'cancelled', reason: 'the user pressed stop' });
    // The partial answer is not kept as a message.
    expect(transcriptLines(result.transcript)).toEqual(['system: You are terse.', USER]);
    await server.waitForDisconnects(1);
    expect(server.disconnects).toBe(1);
  });
});
