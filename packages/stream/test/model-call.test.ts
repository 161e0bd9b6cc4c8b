import type { Model, ModelStreamPart } from '@turnkit/core';
import { describe, expect, it } from 'vitest';
import { streamTurn, type TurnStreamEvent } from '../src/index.js';
import { streamingModel } from './models.js';

const retryable = (message: string) =>
  Object.assign(new Error(message), { turnError: { kind: 'rate_limited', message, retryable: true } });

/** A model whose stream yields `before`, then throws `error`, on every call (counted). */
function failingModel(before: readonly ModelStreamPart[], error: unknown): Model & { streams: number } {
  const model = {
    streams: 0,
    generate: () => Promise.reject(new Error('streams only')),
    async *stream(): AsyncGenerator<ModelStreamPart> {
      model.streams += 1;
      yield* before;
      throw error;
    },
  };
  return model;
}

async function collect(stream: AsyncIterable<TurnStreamEvent>): Promise<TurnStreamEvent[]> {
  const events: TurnStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('model failures while streaming', () => {
  it('retries a retryable failure that came before any output, like runTurn', async () => {
    const model = failingModel([], retryable('Too many requests.'));
    const result = await streamTurn({ model, input: 'hi', maxModelRetries: 2, modelRetryBackoffMs: 0 }).result;
    expect(model.streams).toBe(3);
    expect(result.error).toEqual({ kind: 'rate_limited', message: 'Too many requests.', retryable: true });
  });

  it('does not retry once output reached the reader (the reader would see it twice)', async () => {
    const model = failingModel([{ type: 'text_delta', text: 'Half an ans' }], retryable('Connection reset.'));
    const stream = streamTurn({ model, input: 'hi', maxModelRetries: 2, modelRetryBackoffMs: 0 });
    const events = await collect(stream);
    const result = await stream.result;
    expect(model.streams).toBe(1);
    expect(events.filter((e) => e.type === 'text_delta')).toHaveLength(1);
    expect(result.status).toBe('failed');
    expect(result.error?.kind).toBe('rate_limited');
    expect(result.error?.retryable).toBe(false);
    expect(result.error?.message).toBe(
      'Connection reset. Part of the reply had already been streamed to the reader, so the call is not retried.',
    );
  });

  it('reports partial output as a fact on model_failed (core decides not to retry)', async () => {
    const model = failingModel([{ type: 'text_delta', text: 'Half' }], retryable('Connection reset.'));
    const failures: unknown[] = [];
    const stream = streamTurn({
      model,
      input: 'hi',
      onStep: ({ event }) => (event.type === 'model_failed' ? failures.push(event) : undefined),
    });
    await collect(stream);
    expect(failures).toEqual([
      {
        type: 'model_failed',
        error: { kind: 'rate_limited', message: 'Connection reset.', retryable: true },
        partialOutput: true,
      },
    ]);
  });

  it('a failure before any output says nothing of partial output, and is retried', async () => {
    const model = failingModel([], retryable('Too many requests.'));
    const failures: unknown[] = [];
    await streamTurn({
      model,
      input: 'hi',
      maxModelRetries: 1,
      modelRetryBackoffMs: 0,
      onStep: ({ event }) => (event.type === 'model_failed' ? failures.push(event) : undefined),
    }).result;
    expect(failures).toEqual(
      [1, 2].map(() => ({
        type: 'model_failed',
        error: { kind: 'rate_limited', message: 'Too many requests.', retryable: true },
      })),
    );
  });

  it('a plain error mid-stream fails the turn with the model error, never a crash', async () => {
    const stream = streamTurn({
      model: failingModel([{ type: 'text_delta', text: 'x' }], new Error('socket hang up')),
      input: 'hi',
    });
    const events = await collect(stream);
    expect(events.at(-1)).toEqual({
      type: 'done',
      outcome: { status: 'failed', error: { kind: 'model_error', message: 'socket hang up' } },
    });
  });
});

describe('the reader and the turn', () => {
  it('a signal abort ends the turn even while the reader has stopped pulling', async () => {
    const controller = new AbortController();
    const parts: ModelStreamPart[] = [
      ...Array.from({ length: 100 }, (): ModelStreamPart => ({ type: 'text_delta', text: 'x' })),
      { type: 'finish' },
    ];
    const model = streamingModel([parts]);
    const stream = streamTurn({ model, input: 'hi', signal: controller.signal });
    const events = stream[Symbol.asyncIterator]();
    // Read until the model stream is open (the first text delta), then stop pulling.
    for (let next = await events.next(); next.value?.type !== 'text_delta'; next = await events.next());
    controller.abort('stop');
    // Nobody pulls any more, yet the result arrives.
    const result = await stream.result;
    expect(result.status).toBe('cancelled');
    expect(result.reason).toBe('stop');
    expect(model.closed).toBe(1);
    // The reader, if it comes back, still sees the end of the turn.
    const rest: TurnStreamEvent[] = [];
    for (let next = await events.next(); next.done !== true; next = await events.next()) rest.push(next.value);
    expect(rest.at(-1)).toEqual({ type: 'done', outcome: { status: 'cancelled', reason: 'stop' } });
  });

  it('breaking right after done does not cancel anything', async () => {
    const stream = streamTurn({ model: streamingModel([{ text: 'ok' }]), input: 'hi' });
    for await (const event of stream) if (event.type === 'done') break;
    expect((await stream.result).status).toBe('stopped');
  });

  it('a turn that throws (invalid options) rejects result, throws in the reader and ends the SSE body with an error event', async () => {
    const bad = { model: streamingModel([{ text: 'x' }]), input: 'hi', system: 42 } as unknown as Parameters<
      typeof streamTurn
    >[0];
    await expect(streamTurn(bad).result).rejects.toThrow(/option `system` must be a string/);
    await expect(collect(streamTurn(bad))).rejects.toThrow(/option `system` must be a string/);
    const body = await new Response(streamTurn(bad).toSSE()).text();
    expect(body).toMatch(/^event: error\ndata: \{"type":"error","message":"runTurn option `system` must be a string\."\}\n\n$/);
  });

  it('toResponse keeps the caller status and headers and adds the SSE ones', async () => {
    const response = streamTurn({ model: streamingModel([{ text: 'x' }]), input: 'hi' }).toResponse({
      status: 201,
      headers: { 'x-turn': 'abc', 'cache-control': 'no-store' },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('x-turn')).toBe('abc');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(await response.text()).toMatch(/event: done\n/);
  });
});
