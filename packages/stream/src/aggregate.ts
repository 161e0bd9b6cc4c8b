// The strict aggregator: model stream parts in, one ModelResponse out, plus the events a consumer
// sees while the parts arrive. The parts come from a model adapter and are not trusted: any break
// of the protocol below throws a StreamProtocolError naming the violation, which the interpreter
// turns into `model_failed` (kind `stream_protocol_error`). It never guesses what a broken stream
// meant.
//
// The protocol, per model call:
//   (text_delta | reasoning_delta | tool_call_start | tool_call_delta | tool_call_end)* finish
// - a call is opened by a tool_call_start {id, name}, then takes tool_call_delta parts for its
//   id, then is closed by exactly one tool_call_end; no delta or end after its end, and no second
//   start while a call with that id is open (its deltas would be ambiguous);
// - every call is closed before `finish`; nothing follows `finish`; the stream ends with `finish`.
// Calls are listed in the order of their tool_call_start; the `tool_call` event comes at their
// tool_call_end. Arguments are the concatenated argsText of a call: empty (or blank) means `{}`;
// text that is not JSON keeps the call (id and name) with `input` = the raw text and `inputError`
// = the parse error. A start that reuses the id of a call that already ended is unambiguous, so it
// is not a protocol error: both calls go into the response, and the turn machine fails the reply
// as `invalid_model_response` for the repeated id, exactly as it does for generate().
import { errorMessage, definedProps } from '@turnkit/core/internal';
import type { JsonValue, ModelResponse, ModelStreamPart, ToolCall, TurnError, Usage } from '@turnkit/core';
import type { ModelStreamEvent } from './events.js';

/** Thrown for a model stream that breaks the part protocol; `turnError` is ready for `model_failed`. */
export class StreamProtocolError extends Error {
  /** The failure as a `TurnError` (kind `stream_protocol_error`, not retryable), ready for a `model_failed` event. */
  readonly turnError: TurnError;

  constructor(violation: string) {
    const message = `The model stream broke the part protocol: ${violation}. The model adapter must send tool_call_start, tool_call_delta…, tool_call_end per call and end with one finish part.`;
    super(message);
    this.name = 'StreamProtocolError';
    this.turnError = { kind: 'stream_protocol_error', message, retryable: false, data: { violation } };
  }
}

export interface Aggregator {
  /**
   * Takes the next part; returns the event it produces for the consumer, if any (a text or
   * reasoning delta, or `tool_call` once a call is closed). Throws a StreamProtocolError.
   */
  push(part: ModelStreamPart): ModelStreamEvent | undefined;
  /** The stream ended: returns the response. Throws a StreamProtocolError if no `finish` arrived. */
  finish(): ModelResponse;
}

interface OpenCall {
  readonly id: string;
  readonly name: string;
  readonly args: TextBuffer;
  /** Set by tool_call_end. */
  parsed: ToolCall | undefined;
}

/**
 * Creates an aggregator for one model call.
 *
 * @example
 * const aggregator = createAggregator();
 * for await (const part of model.stream(request, { signal })) {
 *   const event = aggregator.push(part);
 *   if (event !== undefined) await send(event);
 * }
 * const response = aggregator.finish();
 */
export function createAggregator(): Aggregator {
  const text = new TextBuffer();
  const reasoning = new TextBuffer();
  // The latest call per id (a Map, so ids such as `__proto__` are plain keys), and every call in
  // start order, which is their order in the response (the provider's call index).
  const calls = new Map<string, OpenCall>();
  const order: OpenCall[] = [];
  let finish: Extract<ModelStreamPart, { type: 'finish' }> | undefined;
  let broken: StreamProtocolError | undefined;

  const fail = (violation: string): never => {
    broken = new StreamProtocolError(violation);
    throw broken;
  };

  const openCall = (id: unknown, type: string): OpenCall => {
    if (typeof id !== 'string') return fail(`a ${type} part has a call id that is not a string (${describe(id)})`);
    const call = calls.get(id);
    if (call === undefined) return fail(`a ${type} part names call '${id}', which no tool_call_start opened`);
    if (call.parsed !== undefined) return fail(`a ${type} part for call '${id}' arrived after that call's tool_call_end`);
    return call;
  };

  return {
    push(part) {
      if (broken !== undefined) throw broken;
      if (part === null || typeof part !== 'object') return fail(`a part is not an object (${describe(part)})`);
      const type: unknown = part.type;
      if (finish !== undefined) return fail(`a ${typeof type === 'string' ? type : 'part'} part arrived after the finish part`);
      switch (part.type) {
        case 'text_delta':
        case 'reasoning_delta': {
          if (typeof part.text !== 'string')
            return fail(`a ${part.type} part has text that is not a string (${describe(part.text)})`);
          if (part.text === '') return undefined;
          (part.type === 'text_delta' ? text : reasoning).add(part.text);
          return { type: part.type, text: part.text };
        }
        case 'tool_call_start': {
          const { id, name } = part;
          if (typeof id !== 'string' || id === '')
            return fail(`a tool_call_start part has an id that is not a non-empty string (${describe(id)})`);
          if (typeof name !== 'string')
            return fail(`the tool_call_start part of call '${id}' has a name that is not a string (${describe(name)})`);
          const previous = calls.get(id);
          if (previous !== undefined && previous.parsed === undefined)
            return fail(`a second tool_call_start for call '${id}' arrived while that call was still open`);
          const call: OpenCall = { id, name, args: new TextBuffer(), parsed: undefined };
          calls.set(id, call);
          order.push(call);
          return undefined;
        }
        case 'tool_call_delta': {
          const call = openCall(part.id, 'tool_call_delta');
          if (typeof part.argsText !== 'string')
            return fail(
              `a tool_call_delta part for call '${call.id}' has argsText that is not a string (${describe(part.argsText)})`,
            );
          call.args.add(part.argsText);
          return undefined;
        }
        case 'tool_call_end': {
          const call = openCall(part.id, 'tool_call_end');
          call.parsed = parseCall(call);
          return { type: 'tool_call', call: call.parsed };
        }
        case 'finish': {
          for (const call of calls.values()) {
            if (call.parsed === undefined)
              return fail(`the finish part arrived while call '${call.id}' was still open (no tool_call_end)`);
          }
          if (part.usage !== undefined && (part.usage === null || typeof part.usage !== 'object'))
            return fail(`the finish part has usage that is not an object (${describe(part.usage)})`);
          if (part.finishReason !== undefined && typeof part.finishReason !== 'string')
            return fail(`the finish part has a finishReason that is not a string (${describe(part.finishReason)})`);
          if (part.modelId !== undefined && typeof part.modelId !== 'string')
            return fail(`the finish part has a modelId that is not a string (${describe(part.modelId)})`);
          finish = part;
          return undefined;
        }
        default:
          return fail(`a part has the unknown type ${describe(type)}`);
      }
    },

    finish() {
      if (broken !== undefined) throw broken;
      if (finish === undefined) return fail('the stream ended without a finish part');
      const reasoningText = reasoning.value();
      const toolCalls: ToolCall[] = [];
      for (const call of order) if (call.parsed !== undefined) toolCalls.push(call.parsed);
      return {
        text: text.value(),
        toolCalls,
        ...(reasoningText === '' ? {} : { reasoning: reasoningText }),
        ...(finish.usage === undefined ? {} : { usage: { ...finish.usage } as Partial<Usage> }),
        ...definedProps({ finishReason: finish.finishReason }),
        ...definedProps({ modelId: finish.modelId }),
      };
    },
  };
}

function parseCall(call: OpenCall): ToolCall {
  const raw = call.args.value();
  if (raw.trim() === '') return { id: call.id, name: call.name, input: {} };
  try {
    return { id: call.id, name: call.name, input: JSON.parse(raw) as JsonValue };
  } catch (error) {
    const reason = errorMessage(error);
    return {
      id: call.id,
      name: call.name,
      input: raw,
      inputError: `The arguments of call '${call.id}' (${call.name}) are not valid JSON: ${reason}`,
    };
  }
}

/**
 * Text that arrives in many small pieces. Appending each piece to one string builds a rope of a
 * million nodes for a million deltas (tens of MB); joining in blocks keeps it near the text's size.
 */
class TextBuffer {
  private pieces: string[] = [];
  private joined = '';

  add(piece: string): void {
    this.pieces.push(piece);
    if (this.pieces.length >= 1024) this.flush();
  }

  value(): string {
    this.flush();
    return this.joined;
  }

  private flush(): void {
    if (this.pieces.length === 0) return;
    this.joined += this.pieces.join('');
    this.pieces = [];
  }
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value.length > 40 ? `${value.slice(0, 40)}…` : value}'`;
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}
