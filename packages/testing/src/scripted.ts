// A scripted model: a fixed list of replies, one per model call, with deterministic call ids.
// Tests of an agent turn use it instead of a real model, so a run is the same every time.

import type { JsonValue, Model, ModelRequest, ModelResponse, ModelStreamPart, ToolCall, Usage } from '@turnkit/core';
import { definedProps } from '@turnkit/core/internal';

/** A tool call in a script. Without an `id` the model numbers it: `call_1`, `call_2`, … */
export interface ScriptedCall {
  readonly kind: 'call';
  readonly name: string;
  readonly input: JsonValue;
  readonly id?: string;
  /** Marks the arguments as not valid JSON (`input` should then be the raw text). */
  readonly inputError?: string;
}

export interface ReplyExtras {
  readonly usage?: Partial<Usage>;
  readonly reasoning?: string;
  readonly modelId?: string;
}

/** One step of a script: a reply, a failure, or a function of the request that returns either. */
export type ScriptStep =
  | { readonly kind: 'reply'; readonly text: string; readonly calls: readonly ScriptedCall[]; readonly extras: ReplyExtras }
  | { readonly kind: 'fail'; readonly error: unknown }
  | ((
      request: ModelRequest,
      info: { readonly step: number },
    ) => ScriptStep | ModelResponse | Promise<ScriptStep | ModelResponse>);

/** A reply with text and no tool calls. */
export function text(content: string, extras: ReplyExtras = {}): ScriptStep {
  return { kind: 'reply', text: content, calls: [], extras };
}

/** A reply with tool calls; a last argument that is not a call sets the text and extras. */
export function toolCalls(...items: ReadonlyArray<ScriptedCall | (ReplyExtras & { readonly text?: string })>): ScriptStep {
  const calls = items.filter((item): item is ScriptedCall => (item as ScriptedCall).kind === 'call');
  const extras = items.find((item) => (item as ScriptedCall).kind !== 'call') as
    | (ReplyExtras & { readonly text?: string })
    | undefined;
  const { text: content = '', ...rest } = extras ?? {};
  return { kind: 'reply', text: content, calls, extras: rest };
}

/** A tool call for `toolCalls`. */
export function call(
  name: string,
  input: JsonValue = {},
  options: { readonly id?: string; readonly inputError?: string } = {},
): ScriptedCall {
  return { kind: 'call', name, input, ...options };
}

/**
 * A step where the model throws. A string becomes an `Error`; anything else is thrown as is (an
 * object with `retryable: true` or a `turnError` exercises the interpreter's error mapping).
 */
export function fail(error: unknown): ScriptStep {
  return { kind: 'fail', error: typeof error === 'string' ? new Error(error) : error };
}

export interface ScriptedModel extends Model {
  /** Every request, in order (with a copy of the messages as they were at the call). */
  readonly calls: readonly ModelRequest[];
  /** Throws if steps were left unused. */
  assertDone(): void;
  stream(request: ModelRequest, options: { readonly signal: AbortSignal }): AsyncIterable<ModelStreamPart>;
}

export interface ScriptedModelOptions {
  /**
   * The index (from 0) of the step that answers the first call; the steps before it count as
   * already used. Pass the `usage.modelCalls` of a suspended turn to continue its script in a
   * new process. Call ids go on from where those steps left them (`call_3` after two calls);
   * a skipped step given as a function is not run, so its calls are not counted. Default 0.
   */
  readonly startAt?: number;
}

/**
 * A model that answers with `steps`, one per call. Running past the script throws an error naming
 * the missing step, which fails the turn with that message.
 *
 * @example
 * const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]);
 * // The same script, continued after a suspended turn that made one model call:
 * const resumed = scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')], { startAt: 1 });
 */
export function scriptedModel(steps: readonly ScriptStep[], options: ScriptedModelOptions = {}): ScriptedModel {
  const startAt = readStartAt(options, steps.length);
  const calls: ModelRequest[] = [];
  let nextId = 1;
  for (const skipped of steps.slice(0, startAt)) {
    if (typeof skipped !== 'function' && skipped.kind === 'reply')
      nextId += skipped.calls.filter((c) => c.id === undefined).length;
  }

  async function next(request: ModelRequest, signal: AbortSignal): Promise<ModelResponse> {
    calls.push({ ...request, messages: request.messages.slice(), tools: request.tools.slice() });
    const number = startAt + calls.length;
    if (signal.aborted) throw abortError(signal);
    const stepDef = steps[number - 1];
    if (stepDef === undefined) {
      throw new Error(
        `scriptedModel: the turn asked for step ${number}, but the script has only ${steps.length} step${steps.length === 1 ? '' : 's'}. ` +
          `Add step ${number} (for example text('...')) or find out why the turn made an extra model call.`,
      );
    }
    let current: ScriptStep | ModelResponse = stepDef;
    while (typeof current === 'function') current = await current(request, { step: number });
    if ('kind' in current && current.kind === 'fail') throw current.error;
    if ('kind' in current && current.kind === 'reply') return toResponse(current);
    return current as ModelResponse;
  }

  function toResponse(reply: Extract<ScriptStep, { kind: 'reply' }>): ModelResponse {
    const toolCalls = reply.calls.map((c): ToolCall => {
      const id = c.id ?? `call_${nextId++}`;
      return c.inputError === undefined
        ? { id, name: c.name, input: c.input }
        : { id, name: c.name, input: c.input, inputError: c.inputError };
    });
    const { usage, reasoning, modelId } = reply.extras;
    const response: { -readonly [K in keyof ModelResponse]: ModelResponse[K] } = { text: reply.text, toolCalls };
    if (usage !== undefined) response.usage = usage;
    if (reasoning !== undefined) response.reasoning = reasoning;
    if (modelId !== undefined) response.modelId = modelId;
    response.finishReason = toolCalls.length > 0 ? 'tool-calls' : 'stop';
    return response;
  }

  return {
    calls,
    generate: (request, options) => next(request, options.signal),
    async *stream(request, options) {
      const response = await next(request, options.signal);
      if (response.reasoning !== undefined)
        for (const piece of splitText(response.reasoning)) yield { type: 'reasoning_delta', text: piece };
      for (const piece of splitText(response.text)) yield { type: 'text_delta', text: piece };
      for (const c of response.toolCalls) {
        yield { type: 'tool_call_start', id: c.id, name: c.name };
        const args = c.inputError !== undefined && typeof c.input === 'string' ? c.input : JSON.stringify(c.input);
        const half = Math.ceil(args.length / 2);
        for (const piece of [args.slice(0, half), args.slice(half)])
          if (piece.length > 0) yield { type: 'tool_call_delta', id: c.id, argsText: piece };
        yield { type: 'tool_call_end', id: c.id };
      }
      yield {
        type: 'finish',
        ...definedProps({ usage: response.usage }),
        ...definedProps({ finishReason: response.finishReason }),
        ...definedProps({ modelId: response.modelId }),
      };
    },
    assertDone() {
      const used = startAt + calls.length;
      if (used >= steps.length) return;
      const first = used + 1;
      const range = first === steps.length ? `step ${first}` : `steps ${first}–${steps.length}`;
      throw new Error(
        `scriptedModel: ${steps.length - used} of ${steps.length} steps were not used (${range}). The turn made fewer model calls than the script expected.`,
      );
    },
  };
}

function readStartAt(options: ScriptedModelOptions, length: number): number {
  if (options === null || typeof options !== 'object')
    throw new TypeError(`scriptedModel options must be an object such as { startAt: 1 }, got ${String(options)}.`);
  for (const key of Object.keys(options)) {
    if (key !== 'startAt') throw new TypeError(`scriptedModel got an unknown option '${key}'. Known options: startAt.`);
  }
  const startAt: unknown = options.startAt ?? 0;
  if (typeof startAt !== 'number' || !Number.isInteger(startAt) || startAt < 0 || startAt > length) {
    throw new RangeError(
      `scriptedModel option startAt must be a whole number from 0 to ${length} (the script has ${length} step${length === 1 ? '' : 's'}), got ${typeof startAt === 'string' ? JSON.stringify(startAt) : String(startAt)}. ` +
        'Pass the usage.modelCalls of the suspended turn you are resuming.',
    );
  }
  return startAt;
}

/** Text as stream deltas: words with their following whitespace, so joining them gives the text back. */
export function splitText(content: string): string[] {
  return content.match(/\S+\s*|\s+/g) ?? [];
}

function abortError(signal: AbortSignal): Error {
  const error = new Error(typeof signal.reason === 'string' ? signal.reason : 'The model call was aborted.');
  error.name = 'AbortError';
  return error;
}
