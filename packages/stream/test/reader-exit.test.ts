// Every way a reader leaves settles the turn: `result` resolves and an HTTP body ends, even when
// the reader left because an event could not be written (a tool input that is not JSON).
import type { Model } from '@turnkit/core';
import { describe, expect, it } from 'vitest';
import { streamTurn, TurnStream } from '../src/index.js';
import { add } from './models.js';

async function drain(body: ReadableStream<Uint8Array>): Promise<string> {
  let text = '';
  const decoder = new TextDecoder();
  for await (const chunk of body) text += decoder.decode(chunk);
  return text;
}

describe('a reader that leaves after an SSE serialisation error', () => {
  it('a generate-only model returning a tool input that is not JSON: the body ends and the result settles', async () => {
    const model: Model = {
      async generate() {
        return { text: '', toolCalls: [{ id: 'c1', name: 'add', input: { a: 1n, b: 2 } as never }] };
      },
    };
    const stream = streamTurn({ model, tools: [add], input: 'hi' });
    const body = await drain(stream.toSSE());
    expect(body).toMatch(/event: error\ndata: .*BigInt/);
    const result = await stream.result;
    expect(['cancelled', 'failed']).toContain(result.status);
  });

  it('an event that cannot be written ends the SSE body and cancels the turn still running', async () => {
    let stopped = false;
    const stream = new TurnStream<string>(async (sink, signal) => {
      await sink.send({ type: 'notice', notice: { name: 'iteration', data: { big: 1n } as never } });
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      stopped = true;
      return 'settled';
    });
    await drain(stream.toSSE());
    expect(await stream.result).toBe('settled');
    expect(stopped).toBe(true);
  });
});
