import type { ModelStreamPart } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import { runTurn } from '@turnkit/inline';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { streamTurn, type TurnStreamEvent } from '../src/index.js';
import { add, deferred, streamingModel, type Reply } from './models.js';

async function collect(stream: AsyncIterable<TurnStreamEvent>): Promise<TurnStreamEvent[]> {
  const events: TurnStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const toolRound: Reply[] = [
  { text: 'Let me add. ', calls: [{ id: 'c1', name: 'add', input: { a: 1, b: 2 } }] },
  { text: 'It is 3.' },
];

describe('streamTurn', () => {
  it('streams the text as deltas and ends with done', async () => {
    const stream = streamTurn({ model: streamingModel([{ text: 'Hello there, world.' }]), input: 'hi', id: 't1' });
    const events = await collect(stream);
    expect(events.filter((e) => e.type === 'text_delta').map((e) => e.text)).toEqual(['Hello ', 'there, ', 'world.']);
    expect(events.at(-1)).toEqual({
      type: 'done',
      outcome: { status: 'stopped', stopReason: 'completed', output: 'Hello there, world.' },
    });
    expect((await stream.result).text).toBe('Hello there, world.');
  });

  it('gives the same result as runTurn for the same scenario', async () => {
    const streamed = streamTurn({ model: streamingModel(toolRound), tools: [add], input: 'add 1 and 2', id: 't1' });
    await collect(streamed);
    const reference = await runTurn({
      model: streamingModel(toolRound, { streams: false }),
      tools: [add],
      input: 'add 1 and 2',
      id: 't1',
    });
    expect(await streamed.result).toEqual(reference);
  });

  it('offers each streamed model call the tools selectTools chooses (none for a forced final call)', async () => {
    const model = streamingModel(toolRound);
    const stream = streamTurn({
      model,
      tools: [add],
      input: 'add 1 and 2',
      id: 't1',
      limits: { maxIterations: 1 },
      selectTools: () => ['add'],
    });
    await collect(stream);
    expect((await stream.result).stopReason).toBe('max_iterations');
    expect(model.requests.map((r) => r.tools.map((t) => t.name))).toEqual([['add'], []]);

    const none = streamingModel(toolRound);
    await collect(streamTurn({ model: none, tools: [add], input: 'add', id: 't2', selectTools: () => [] }));
    expect(none.requests[0]?.tools).toEqual([]);
  });

  it('emits each append, notice, call and result in turn order', async () => {
    const events = await collect(streamTurn({ model: streamingModel(toolRound), tools: [add], input: 'add 1 and 2' }));
    const summary = events.map((e) => {
      switch (e.type) {
        case 'message':
          return `message:${e.message.role}`;
        case 'notice':
          return `notice:${e.notice.name}`;
        case 'tool_call':
          return `tool_call:${e.call.id}`;
        case 'tool_result':
          return `tool_result:${e.result.callId}`;
        case 'text_delta':
          return `text:${e.text}`;
        default:
          return e.type;
      }
    });
    expect(summary).toEqual([
      'message:user',
      'notice:turn_started',
      'notice:iteration',
      'text:Let ',
      'text:me ',
      'text:add. ',
      'tool_call:c1',
      'message:assistant',
      'tool_result:c1',
      'message:tool',
      'notice:steering',
      'notice:iteration',
      'text:It ',
      'text:is ',
      'text:3.',
      'message:assistant',
      'done',
    ]);
    const toolCall = events.find((e) => e.type === 'tool_call');
    expect(toolCall).toEqual({ type: 'tool_call', call: { id: 'c1', name: 'add', input: { a: 1, b: 2 } } });
    const toolResult = events.find((e) => e.type === 'tool_result');
    expect(toolResult).toEqual({ type: 'tool_result', result: { callId: 'c1', name: 'add', output: 3, isError: false } });
  });

  it('falls back to generate() for a model without stream(), with its text as one delta', async () => {
    const model = streamingModel([{ text: 'All in one go.' }], { streams: false });
    const stream = streamTurn({ model, input: 'hi' });
    const deltas = (await collect(stream)).filter((e) => e.type === 'text_delta');
    expect(deltas).toEqual([{ type: 'text_delta', text: 'All in one go.' }]);
    expect((await stream.result).status).toBe('stopped');
  });

  it('turns a protocol violation into a failed turn naming it (model_failed, not a crash)', async () => {
    const broken: ModelStreamPart[] = [
      { type: 'text_delta', text: 'Hi' },
      { type: 'tool_call_delta', id: 'ghost', argsText: '{}' },
      { type: 'finish' },
    ];
    const stream = streamTurn({ model: streamingModel([broken]), input: 'hi' });
    const events = await collect(stream);
    const result = await stream.result;
    expect(result.status).toBe('failed');
    expect(result.error?.kind).toBe('stream_protocol_error');
    expect(result.error?.message).toMatch(/call 'ghost', which no tool_call_start opened/);
    expect(events.at(-1)).toMatchObject({
      type: 'done',
      outcome: { status: 'failed', error: { kind: 'stream_protocol_error' } },
    });
  });

  it('fails a stream that ends without finish', async () => {
    const stream = streamTurn({ model: streamingModel([[{ type: 'text_delta', text: 'cut' }]]), input: 'hi' });
    const result = await stream.result;
    expect(result.error).toMatchObject({
      kind: 'stream_protocol_error',
      message: expect.stringMatching(/ended without a finish part/),
    });
  });

  it('keeps a call whose arguments are not JSON and lets the dispatcher answer it', async () => {
    const parts: ModelStreamPart[] = [
      { type: 'tool_call_start', id: 'c1', name: 'add' },
      { type: 'tool_call_delta', id: 'c1', argsText: '{"a": 1,' },
      { type: 'tool_call_end', id: 'c1' },
      { type: 'finish' },
    ];
    const stream = streamTurn({ model: streamingModel([parts, { text: 'Sorry.' }]), tools: [add], input: 'hi' });
    const events = await collect(stream);
    const call = events.find((e) => e.type === 'tool_call');
    expect(call).toMatchObject({
      call: { id: 'c1', name: 'add', input: '{"a": 1,', inputError: expect.stringMatching(/not valid JSON/) },
    });
    const result = events.find((e) => e.type === 'tool_result');
    expect(result).toMatchObject({ result: { callId: 'c1', isError: true } });
    expect((await stream.result).status).toBe('stopped');
  });

  it('runs the turn to its end when only result is awaited', async () => {
    const model = streamingModel(toolRound);
    const stream = streamTurn({ model, tools: [add], input: 'add 1 and 2' });
    const result = await stream.result;
    expect(result.status).toBe('stopped');
    expect(result.text).toBe('It is 3.');
    expect(() => stream[Symbol.asyncIterator]()).toThrow(/already drained because `result` was awaited/);
  });

  it('can be read only once', async () => {
    const stream = streamTurn({ model: streamingModel([{ text: 'x' }]), input: 'hi' });
    const reader = stream.toReadableStream().getReader();
    expect(() => stream.toSSE()).toThrow(/already being read/);
    const events: TurnStreamEvent[] = [];
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      events.push(next.value);
    }
    expect(events.at(-1)?.type).toBe('done');
  });

  it('announces parked calls and ends without done when the turn suspends', async () => {
    const guarded = defineTool({
      name: 'guarded',
      description: 'Adds, with approval.',
      input: z.object({ a: z.number(), b: z.number() }),
      needsApproval: true,
      execute: ({ a, b }) => a + b,
    });
    const stream = streamTurn({
      model: streamingModel([{ text: '', calls: [{ id: 'c1', name: 'guarded', input: { a: 1, b: 2 } }] }]),
      tools: [guarded],
      input: 'hi',
    });
    const events = await collect(stream);
    expect(events.at(-1)).toEqual({
      type: 'awaiting_approval',
      pending: [
        { call: { id: 'c1', name: 'guarded', input: { a: 1, b: 2 } }, input: { a: 1, b: 2 }, reason: expect.any(String) },
      ],
    });
    expect(events.some((e) => e.type === 'done')).toBe(false);
    expect((await stream.result).status).toBe('suspended');
  });

  it('stopping right after awaiting_approval leaves the turn suspended, not cancelled', async () => {
    const guarded = defineTool({
      name: 'guarded',
      description: 'Adds, with approval.',
      input: z.object({ a: z.number(), b: z.number() }),
      needsApproval: true,
      execute: ({ a, b }) => a + b,
    });
    const stream = streamTurn({
      model: streamingModel([{ text: '', calls: [{ id: 'c1', name: 'guarded', input: { a: 1, b: 2 } }] }]),
      tools: [guarded],
      input: 'hi',
    });
    for await (const event of stream) if (event.type === 'awaiting_approval') break;
    expect((await stream.result).status).toBe('suspended');
  });

  it('streams parallel tool results as each completes; the transcript keeps call order', async () => {
    const slowGate = deferred();
    const fastDone = deferred();
    const slow = defineTool({
      name: 'slow',
      description: 'Waits for the fast one.',
      input: z.object({}),
      readOnly: true,
      execute: async () => {
        await slowGate.promise;
        return 'slow';
      },
    });
    const fast = defineTool({
      name: 'fast',
      description: 'Returns at once.',
      input: z.object({}),
      readOnly: true,
      execute: () => {
        fastDone.resolve();
        return 'fast';
      },
    });
    void fastDone.promise.then(() => setTimeout(() => slowGate.resolve(), 0));
    const calls = [
      { id: 's', name: 'slow', input: {} },
      { id: 'f', name: 'fast', input: {} },
    ];
    const stream = streamTurn({
      model: streamingModel([{ text: '', calls }, { text: 'done' }]),
      tools: [slow, fast],
      input: 'go',
    });
    const events = await collect(stream);
    expect(events.filter((e) => e.type === 'tool_result').map((e) => e.result.callId)).toEqual(['f', 's']);
    const transcript = (await stream.result).transcript;
    expect(transcript.filter((m) => m.role === 'tool').map((m) => m.result.callId)).toEqual(['s', 'f']);
  });
});

describe('backpressure', () => {
  it('advances the model only as the reader pulls (at most two parts ahead)', async () => {
    const parts: ModelStreamPart[] = [
      ...Array.from({ length: 50 }, (): ModelStreamPart => ({ type: 'text_delta', text: 'x' })),
      { type: 'finish' },
    ];
    const model = streamingModel([parts]);
    const stream = streamTurn({ model, input: 'hi' });
    let deltas = 0;
    let maxAhead = 0;
    for await (const event of stream) {
      if (event.type !== 'text_delta') continue;
      deltas += 1;
      // A slow reader: let everything else run before the next pull.
      await new Promise((resolve) => setImmediate(resolve));
      maxAhead = Math.max(maxAhead, model.yielded - deltas);
    }
    expect(deltas).toBe(50);
    expect(maxAhead).toBeLessThanOrEqual(2);
  });
});

describe('cancellation', () => {
  it('breaking out of for await closes the model stream and resolves result cancelled', async () => {
    const parts: ModelStreamPart[] = [
      ...Array.from({ length: 100 }, (): ModelStreamPart => ({ type: 'text_delta', text: 'x' })),
      { type: 'finish' },
    ];
    const model = streamingModel([parts]);
    const stream = streamTurn({ model, input: 'hi' });
    let seen = 0;
    for await (const event of stream) {
      if (event.type === 'text_delta' && ++seen === 3) break;
    }
    const result = await stream.result;
    expect(result.status).toBe('cancelled');
    expect(result.reason).toMatch(/stopped reading the turn stream/);
    expect(model.closed).toBe(1);
    expect(model.yielded).toBeLessThan(10);
  });

  it('the signal aborts a running tool and resolves result cancelled, with done for a reader still there', async () => {
    const controller = new AbortController();
    const started = deferred();
    let toolSignal: AbortSignal | undefined;
    const wait = defineTool({
      name: 'wait',
      description: 'Waits until aborted.',
      input: z.object({}),
      readOnly: true,
      execute: (_input, ctx) =>
        new Promise((_resolve, reject) => {
          toolSignal = ctx.signal;
          started.resolve();
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted')));
        }),
    });
    const stream = streamTurn({
      model: streamingModel([{ text: '', calls: [{ id: 'w', name: 'wait', input: {} }] }]),
      tools: [wait],
      input: 'hi',
      signal: controller.signal,
    });
    void started.promise.then(() => controller.abort('the user pressed stop'));
    const events = await collect(stream);
    const result = await stream.result;
    expect(result.status).toBe('cancelled');
    expect(result.reason).toBe('the user pressed stop');
    expect(toolSignal?.aborted).toBe(true);
    expect(events.at(-1)).toEqual({ type: 'done', outcome: { status: 'cancelled', reason: 'the user pressed stop' } });
    // The transcript still holds one result for the cancelled call.
    expect(result.transcript.filter((m) => m.role === 'tool')).toHaveLength(1);
  });

  it('cancelling the ReadableStream cancels the turn', async () => {
    const parts: ModelStreamPart[] = [
      ...Array.from({ length: 100 }, (): ModelStreamPart => ({ type: 'text_delta', text: 'x' })),
      { type: 'finish' },
    ];
    const model = streamingModel([parts]);
    const stream = streamTurn({ model, input: 'hi' });
    const reader = stream.toReadableStream().getReader();
    // Read until the model stream is open (the first text delta), then cancel.
    for (let next = await reader.read(); next.value?.type !== 'text_delta'; next = await reader.read());
    await reader.cancel();
    expect((await stream.result).status).toBe('cancelled');
    expect(model.closed).toBe(1);
  });
});
