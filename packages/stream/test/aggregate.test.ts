import type { ModelStreamPart } from '@turnkit/core';
import { describe, expect, it } from 'vitest';
import { createAggregator, StreamProtocolError } from '../src/aggregate.js';

/** Pushes every part, then finishes; returns the response or the thrown error. */
function aggregate(parts: readonly unknown[]) {
  const aggregator = createAggregator();
  const events: unknown[] = [];
  for (const part of parts) {
    const event = aggregator.push(part as ModelStreamPart);
    if (event !== undefined) events.push(event);
  }
  return { response: aggregator.finish(), events };
}

function violation(parts: readonly unknown[]): StreamProtocolError {
  try {
    aggregate(parts);
  } catch (error) {
    expect(error).toBeInstanceOf(StreamProtocolError);
    const protocolError = error as StreamProtocolError;
    expect(protocolError.turnError.kind).toBe('stream_protocol_error');
    expect(protocolError.turnError.message).toBe(protocolError.message);
    expect(protocolError.turnError.retryable).toBe(false);
    return protocolError;
  }
  throw new Error('expected a protocol violation');
}

const start = (id: string, name = 'add'): ModelStreamPart => ({ type: 'tool_call_start', id, name });
const delta = (id: string, argsText: string): ModelStreamPart => ({ type: 'tool_call_delta', id, argsText });
const end = (id: string): ModelStreamPart => ({ type: 'tool_call_end', id });
const finish: ModelStreamPart = { type: 'finish', finishReason: 'stop' };

describe('aggregate: a valid stream', () => {
  it('joins text, reasoning and split tool arguments, and emits each event as it completes', () => {
    const { response, events } = aggregate([
      { type: 'reasoning_delta', text: 'think' },
      { type: 'text_delta', text: 'Hel' },
      { type: 'text_delta', text: 'lo' },
      start('c1'),
      start('c2', 'mul'),
      delta('c1', '{"a":'),
      delta('c2', '{"x":2}'),
      delta('c1', '1}'),
      end('c2'),
      end('c1'),
      { type: 'finish', usage: { inputTokens: 3, outputTokens: 4 }, finishReason: 'tool_calls', modelId: 'm1' },
    ]);
    expect(response).toEqual({
      text: 'Hello',
      reasoning: 'think',
      // In start order; the events come in end order.
      toolCalls: [
        { id: 'c1', name: 'add', input: { a: 1 } },
        { id: 'c2', name: 'mul', input: { x: 2 } },
      ],
      usage: { inputTokens: 3, outputTokens: 4 },
      finishReason: 'tool_calls',
      modelId: 'm1',
    });
    expect(events).toEqual([
      { type: 'reasoning_delta', text: 'think' },
      { type: 'text_delta', text: 'Hel' },
      { type: 'text_delta', text: 'lo' },
      { type: 'tool_call', call: { id: 'c2', name: 'mul', input: { x: 2 } } },
      { type: 'tool_call', call: { id: 'c1', name: 'add', input: { a: 1 } } },
    ]);
  });

  it('reads empty or blank arguments as {}', () => {
    const { response } = aggregate([start('a'), end('a'), start('b'), delta('b', '  '), end('b'), finish]);
    expect(response.toolCalls).toEqual([
      { id: 'a', name: 'add', input: {} },
      { id: 'b', name: 'add', input: {} },
    ]);
  });

  it('keeps a call whose arguments are not JSON, with the raw text and the parse error', () => {
    const { response } = aggregate([start('c1'), delta('c1', '{"a": 1,'), end('c1'), finish]);
    const [call] = response.toolCalls;
    expect(call?.id).toBe('c1');
    expect(call?.name).toBe('add');
    expect(call?.input).toBe('{"a": 1,');
    expect(call?.inputError).toMatch(/call 'c1' \(add\) are not valid JSON/);
  });

  it('leaves out reasoning when there was none and optional fields the finish part lacks', () => {
    expect(aggregate([{ type: 'text_delta', text: 'x' }, { type: 'finish' }]).response).toEqual({ text: 'x', toolCalls: [] });
  });

  it('keeps both calls when a closed call id is started again (the turn machine rejects the repeated id)', () => {
    const { response } = aggregate([
      start('c1'),
      delta('c1', '{"a":1}'),
      end('c1'),
      start('c1', 'mul'),
      delta('c1', '{"b":2}'),
      end('c1'),
      finish,
    ]);
    expect(response.toolCalls).toEqual([
      { id: 'c1', name: 'add', input: { a: 1 } },
      { id: 'c1', name: 'mul', input: { b: 2 } },
    ]);
  });

  it('treats a call id __proto__ as a plain id', () => {
    const { response } = aggregate([start('__proto__'), delta('__proto__', '{}'), end('__proto__'), finish]);
    expect(response.toolCalls).toEqual([{ id: '__proto__', name: 'add', input: {} }]);
  });
});

describe('aggregate: protocol violations (one test each)', () => {
  it('a delta for a call that was never started', () => {
    expect(violation([start('c1'), delta('c9', '{}')]).message).toMatch(
      /tool_call_delta part names call 'c9', which no tool_call_start opened/,
    );
  });

  it('an end for a call that was never started', () => {
    expect(violation([end('c9')]).message).toMatch(/tool_call_end part names call 'c9', which no tool_call_start opened/);
  });

  it('a second start for the same id while that call is open', () => {
    expect(violation([start('c1'), start('c1')]).message).toMatch(
      /second tool_call_start for call 'c1' arrived while that call was still open/,
    );
    expect(violation([start('c1'), delta('c1', '{'), start('c1', 'other')]).message).toMatch(
      /second tool_call_start for call 'c1'/,
    );
  });

  it('a delta after the call ended', () => {
    expect(violation([start('c1'), end('c1'), delta('c1', '{}')]).message).toMatch(
      /tool_call_delta part for call 'c1' arrived after that call's tool_call_end/,
    );
  });

  it('a second end for the same call', () => {
    expect(violation([start('c1'), end('c1'), end('c1')]).message).toMatch(
      /tool_call_end part for call 'c1' arrived after that call's tool_call_end/,
    );
  });

  it('text after finish', () => {
    expect(violation([finish, { type: 'text_delta', text: 'late' }]).message).toMatch(
      /a text_delta part arrived after the finish part/,
    );
  });

  it('a second finish', () => {
    expect(violation([finish, finish]).message).toMatch(/a finish part arrived after the finish part/);
  });

  it('a stream that ends without finish', () => {
    expect(violation([{ type: 'text_delta', text: 'cut off' }]).message).toMatch(/ended without a finish part/);
  });

  it('finish while a call is still open', () => {
    expect(violation([start('c1'), delta('c1', '{}'), finish]).message).toMatch(
      /finish part arrived while call 'c1' was still open/,
    );
  });

  it('an unknown part type', () => {
    expect(violation([{ type: 'image', url: 'x' }]).message).toMatch(/unknown type 'image'/);
  });

  it('a part that is not an object', () => {
    expect(violation([null]).message).toMatch(/a part is not an object \(null\)/);
  });

  it('text that is not a string', () => {
    expect(violation([{ type: 'text_delta', text: 42 }]).message).toMatch(/text_delta part has text that is not a string \(42\)/);
  });

  it('a start without a usable id or name', () => {
    expect(violation([{ type: 'tool_call_start', id: '', name: 'add' }]).message).toMatch(/id that is not a non-empty string/);
    expect(violation([{ type: 'tool_call_start', id: 'c1', name: 7 }]).message).toMatch(
      /call 'c1' has a name that is not a string/,
    );
  });

  it('argsText that is not a string', () => {
    expect(violation([start('c1'), { type: 'tool_call_delta', id: 'c1', argsText: {} }]).message).toMatch(
      /argsText that is not a string \(an object\)/,
    );
  });

  it('a malformed finish part', () => {
    expect(violation([{ type: 'finish', usage: 'lots' }]).message).toMatch(/usage that is not an object/);
    expect(violation([{ type: 'finish', finishReason: 1 }]).message).toMatch(/finishReason that is not a string/);
  });

  it('stays broken after a violation', () => {
    const aggregator = createAggregator();
    expect(() => aggregator.push(end('x'))).toThrow(StreamProtocolError);
    expect(() => aggregator.push({ type: 'finish' })).toThrow(/no tool_call_start opened/);
    expect(() => aggregator.finish()).toThrow(/no tool_call_start opened/);
  });
});
