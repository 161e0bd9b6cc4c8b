import type { ModelStreamPart } from '@turnkit/core';
import { fromAISDK, ModelCallError } from '@turnkit/ai-sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chunk, errorReply, FAKE_MODEL, type FakeOpenAIServer, sse, startFakeOpenAIServer } from '@turnkit/testing';
import { drain, languageModelFor, request, signal, userAsks } from './setup.js';

let server: FakeOpenAIServer;
beforeEach(async () => {
  server = await startFakeOpenAIServer();
});
afterEach(async () => {
  await server.close();
});

function streamOf(parts: readonly (object | string)[]) {
  server.reply(sse(parts));
  return fromAISDK(languageModelFor(server)).stream!(request(userAsks), { signal: signal() });
}

/** The arguments text of each tool call, assembled from its deltas, in start order. */
function assembledCalls(parts: readonly ModelStreamPart[]): { id: string; name: string; args: string; ended: boolean }[] {
  const calls: { id: string; name: string; args: string; ended: boolean }[] = [];
  for (const part of parts) {
    if (part.type === 'tool_call_start') calls.push({ id: part.id, name: part.name, args: '', ended: false });
    const call = 'id' in part ? calls.find((c) => c.id === part.id) : undefined;
    if (part.type === 'tool_call_delta' && call) call.args += part.argsText;
    if (part.type === 'tool_call_end' && call) call.ended = true;
  }
  return calls;
}

describe('stream: mapping', () => {
  it('streams text deltas, then finish with usage, finish reason and model id', async () => {
    const { parts, error } = await drain(
      streamOf([
        chunk.role('fake-model-1-2025'),
        chunk.text('Sunny'),
        chunk.text(', 21°C.'),
        chunk.finish('stop'),
        chunk.usage({ prompt: 9, completion: 4 }),
      ]),
    );
    expect(error).toBeUndefined();
    expect(parts).toEqual([
      { type: 'text_delta', text: 'Sunny' },
      { type: 'text_delta', text: ', 21°C.' },
      {
        type: 'finish',
        usage: { inputTokens: 9, outputTokens: 4, totalTokens: 13, cost: 0 },
        finishReason: 'stop',
        modelId: 'fake-model-1-2025',
      },
    ]);
    const body = server.requests[0]!.body;
    expect(body).toMatchObject({ model: FAKE_MODEL, stream: true, stream_options: { include_usage: true }, tool_choice: 'auto' });
    expect(body.tools).toHaveLength(1);
  });

  it('streams reasoning deltas before the text', async () => {
    const { parts } = await drain(
      streamOf([
        chunk.role(),
        chunk.reasoning('Paris is '),
        chunk.reasoning('in France.'),
        chunk.text('Sunny.'),
        chunk.finish('stop'),
      ]),
    );
    expect(parts.slice(0, 3)).toEqual([
      { type: 'reasoning_delta', text: 'Paris is ' },
      { type: 'reasoning_delta', text: 'in France.' },
      { type: 'text_delta', text: 'Sunny.' },
    ]);
  });

  it('streams tool calls whose arguments are split across chunks', async () => {
    const { parts, error } = await drain(
      streamOf([
        chunk.role(),
        chunk.toolCallStart(0, 'call_1', 'get_weather'),
        chunk.toolCallArgs(0, '{"ci'),
        chunk.toolCallArgs(0, 'ty":"Pa'),
        chunk.toolCallArgs(0, 'ris"}'),
        chunk.toolCallStart(1, 'call_2', 'get_weather', '{"city"'),
        chunk.toolCallArgs(1, ':"Oslo"}'),
        chunk.finish('tool_calls'),
        chunk.usage({ prompt: 20, completion: 11 }),
      ]),
    );
    expect(error).toBeUndefined();
    expect(assembledCalls(parts)).toEqual([
      { id: 'call_1', name: 'get_weather', args: '{"city":"Paris"}', ended: true },
      { id: 'call_2', name: 'get_weather', args: '{"city":"Oslo"}', ended: true },
    ]);
    // Several deltas reached the caller, not one joined string.
    expect(parts.filter((p) => p.type === 'tool_call_delta' && p.id === 'call_1').length).toBeGreaterThanOrEqual(3);
    // Every start comes before its deltas and its end.
    for (const id of ['call_1', 'call_2']) {
      const indexes = parts.flatMap((p, i) => ('id' in p && p.id === id ? [i] : []));
      expect(parts[indexes[0]!]!.type).toBe('tool_call_start');
      expect(parts[indexes.at(-1)!]!.type).toBe('tool_call_end');
    }
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      usage: { inputTokens: 20, outputTokens: 11, totalTokens: 31, cost: 0 },
      finishReason: 'tool-calls',
      modelId: FAKE_MODEL,
    });
  });

  it('passes malformed tool arguments through as raw text', async () => {
    const { parts, error } = await drain(
      streamOf([chunk.role(), chunk.toolCallStart(0, 'call_1', 'get_weather', '{"city": Par'), chunk.finish('tool_calls')]),
    );
    expect(error).toBeUndefined();
    expect(assembledCalls(parts)).toEqual([{ id: 'call_1', name: 'get_weather', args: '{"city": Par', ended: true }]);
  });

  it('maps a length finish without usage', async () => {
    const { parts } = await drain(streamOf([chunk.role(), chunk.text('Sunny and'), chunk.finish('length')]));
    expect(parts.at(-1)).toEqual({ type: 'finish', usage: { cost: 0 }, finishReason: 'length', modelId: FAKE_MODEL });
  });
});

describe('stream: errors', () => {
  it('throws a provider_error at a malformed chunk, after the parts before it', async () => {
    const { parts, error } = await drain(
      streamOf([chunk.role(), chunk.text('Hi'), '{"choices": [ not json', chunk.text(' there'), chunk.finish('stop')]),
    );
    expect(parts).toEqual([{ type: 'text_delta', text: 'Hi' }]);
    expect(error).toBeInstanceOf(ModelCallError);
    expect((error as ModelCallError).turnError).toMatchObject({ kind: 'provider_error', retryable: false });
  });

  it('throws the message of an error object sent inside the stream', async () => {
    const { error } = await drain(streamOf([chunk.role(), chunk.error('model crashed mid-answer')]));
    expect((error as ModelCallError).turnError.kind).toBe('provider_error');
    expect((error as ModelCallError).turnError.message).toContain('model crashed mid-answer');
  });

  it('throws when the stream ends without a finish reason', async () => {
    const { parts, error } = await drain(streamOf([chunk.role(), chunk.text('cut')]));
    expect(parts).toEqual([{ type: 'text_delta', text: 'cut' }]);
    expect((error as ModelCallError).turnError.message).toContain('without a finish reason');
  });

  it("maps a 429 to rate_limited before any part, without retrying it (retries are the interpreter's)", async () => {
    server.reply(errorReply(429, 'Rate limit reached', { 'retry-after': '2' }));
    const first = await drain(fromAISDK(languageModelFor(server)).stream!(request(userAsks), { signal: signal() }));
    expect(first.parts).toEqual([]);
    expect((first.error as ModelCallError).turnError).toMatchObject({
      kind: 'rate_limited',
      retryable: true,
      data: { statusCode: 429, retryAfterMs: 2000 },
    });
    expect(server.requests).toHaveLength(1);

    const second = await drain(streamOf([chunk.role(), chunk.text('ok'), chunk.finish('stop')]));
    expect(second.error).toBeUndefined();
    expect(second.parts[0]).toEqual({ type: 'text_delta', text: 'ok' });
    expect(server.requests).toHaveLength(2);
  });

  it('maps a 500 to provider_error', async () => {
    server.reply(errorReply(500, 'upstream exploded'));
    const { error } = await drain(fromAISDK(languageModelFor(server)).stream!(request(userAsks), { signal: signal() }));
    expect((error as ModelCallError).turnError).toMatchObject({
      kind: 'provider_error',
      retryable: true,
      data: { statusCode: 500 },
    });
    expect((error as ModelCallError).turnError.message).toContain('upstream exploded');
  });
});

describe('stream: abort and early exit', () => {
  it('aborts mid-stream: the next read throws aborted and the connection closes', async () => {
    server.reply(sse([chunk.role(), chunk.text('partial')], { done: false, hold: true }));
    const controller = new AbortController();
    const iterator = fromAISDK(languageModelFor(server)).stream!(request(userAsks), { signal: controller.signal })[
      Symbol.asyncIterator
    ]();
    expect((await iterator.next()).value).toEqual({ type: 'text_delta', text: 'partial' });
    controller.abort();
    const error = await iterator.next().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as ModelCallError).turnError).toEqual({
      kind: 'aborted',
      message: 'The model call was aborted by its abort signal.',
      retryable: false,
    });
    await server.waitForDisconnects(1);
  });

  it('closes the connection when the caller stops reading early', async () => {
    server.reply(sse([chunk.role(), chunk.text('first')], { done: false, hold: true }));
    const stream = fromAISDK(languageModelFor(server)).stream!(request(userAsks), { signal: signal() });
    for await (const part of stream) {
      expect(part).toEqual({ type: 'text_delta', text: 'first' });
      break;
    }
    await server.waitForDisconnects(1);
    expect(server.disconnects).toBe(1);
  });
});
