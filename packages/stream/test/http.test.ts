import type { AddressInfo } from 'node:net';
import type { ModelStreamPart } from '@turnkit/core';
import type { TurnResult } from '@turnkit/inline';
import { afterEach, describe, expect, it } from 'vitest';
import { createTurnServer, handle } from '../examples/http-server.js';
import type { TurnStreamEvent } from '../src/index.js';
import { deferred, streamingModel } from './models.js';

/** Splits an SSE body into its events (`event:` name and parsed `data:`). */
function parseSSE(body: string): { event: string; data: TurnStreamEvent }[] {
  return body
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))?.slice('event: '.length) ?? '';
      const data = lines.find((line) => line.startsWith('data: '))?.slice('data: '.length) ?? 'null';
      return { event, data: JSON.parse(data) as TurnStreamEvent };
    });
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

async function listen(server: ReturnType<typeof createTurnServer>): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  const { port } = server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

describe('serving a stream over HTTP', () => {
  it('a node:http server streams toSSE(); fetch reads it and reassembles the text', async () => {
    const text = 'The quick brown fox jumps over the lazy dog.';
    const results: TurnResult[] = [];
    const url = await listen(
      createTurnServer(
        () => streamingModel([{ text }]),
        (result) => results.push(result),
      ),
    );
    const response = await fetch(`${url}/?q=hello`);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const events = parseSSE(await response.text());
    expect(events.every(({ event, data }) => event === data.type)).toBe(true);
    const deltas = events.flatMap(({ data }) => (data.type === 'text_delta' ? [data.text] : []));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(text);
    expect(events.at(-1)?.data).toEqual({ type: 'done', outcome: { status: 'stopped', stopReason: 'completed', output: text } });
    expect(events.find(({ data }) => data.type === 'message')?.data).toEqual({
      type: 'message',
      message: { role: 'user', content: 'hello' },
    });
    expect(results.map((result) => result.status)).toEqual(['stopped']);
  });

  it('a client that disconnects cancels the turn on the server', async () => {
    // 10,000 deltas of 1 KB: far more than the socket buffers hold, so backpressure shows.
    const piece = 'x'.repeat(1024);
    const parts: ModelStreamPart[] = [
      ...Array.from({ length: 10_000 }, (): ModelStreamPart => ({ type: 'text_delta', text: piece })),
      { type: 'finish' },
    ];
    const model = streamingModel([parts]);
    const settled = deferred<TurnResult>();
    const url = await listen(createTurnServer(() => model, settled.resolve));
    const controller = new AbortController();
    const response = await fetch(url, { signal: controller.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    controller.abort();
    const result = await settled.promise;
    expect(result.status).toBe('cancelled');
    expect(model.closed).toBe(1);
    // Backpressure over the socket: the model stopped long before its 10,000 parts.
    expect(model.yielded).toBeLessThan(10_000);
  });

  it('toResponse() gives a web Response with SSE headers, as a Hono or Next.js handler returns it', async () => {
    const response = handle(new Request('http://localhost/?q=hi'), streamingModel([{ text: 'Hi there.' }]));
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache, no-transform');
    const events = parseSSE(await response.text());
    expect(events.flatMap(({ data }) => (data.type === 'text_delta' ? [data.text] : [])).join('')).toBe('Hi there.');
  });
});
