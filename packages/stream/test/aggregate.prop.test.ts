import type { JsonValue, ModelResponse, ModelStreamPart, ToolCall } from '@turnkit/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAggregator } from '../src/aggregate.js';
import { testLog } from '../../../test-log.ts';

const NUM_RUNS = 500;

interface LogicalCall {
  readonly id: string;
  readonly name: string;
  /** The arguments text as the model sends it (valid JSON or not). */
  readonly argsText: string;
}

interface Logical {
  readonly text: string;
  readonly reasoning: string;
  readonly calls: readonly LogicalCall[];
  readonly finish: Extract<ModelStreamPart, { type: 'finish' }>;
}

const argsText = fc.oneof(
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fc.constant(''),
  fc.string(), // mostly not JSON
);

const logical: fc.Arbitrary<Logical> = fc.record({
  text: fc.string({ unit: 'grapheme' }),
  reasoning: fc.string(),
  calls: fc.uniqueArray(fc.record({ id: fc.string({ minLength: 1 }), name: fc.string(), argsText }), {
    selector: (call) => call.id,
    maxLength: 5,
  }),
  finish: fc.record(
    {
      type: fc.constant('finish' as const),
      usage: fc.record({ inputTokens: fc.nat(), outputTokens: fc.nat() }),
      finishReason: fc.constantFrom('stop', 'tool_calls'),
      modelId: fc.string(),
    },
    { requiredKeys: ['type'] },
  ),
});

/** Any split of `text` into pieces (empty pieces included), driven by cut points. */
function split(text: string, cuts: readonly number[]): string[] {
  const points = cuts.map((cut) => cut % (text.length + 1)).sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const point of points) {
    pieces.push(text.slice(from, point));
    from = point;
  }
  pieces.push(text.slice(from));
  return pieces;
}

/**
 * One valid part sequence for `response`: every text split into deltas, the lanes (text,
 * reasoning, each call) interleaved by `picks`, starts kept in call order, `finish` last.
 */
function partsFor(response: Logical, cuts: readonly (readonly number[])[], picks: readonly number[]): ModelStreamPart[] {
  const lanes: ModelStreamPart[][] = [
    split(response.text, cuts[0] ?? []).map((text) => ({ type: 'text_delta', text })),
    split(response.reasoning, cuts[1] ?? []).map((text) => ({ type: 'reasoning_delta', text })),
    ...response.calls.map((call, index): ModelStreamPart[] => [
      { type: 'tool_call_start', id: call.id, name: call.name },
      ...split(call.argsText, cuts[index + 2] ?? []).map(
        (piece): ModelStreamPart => ({ type: 'tool_call_delta', id: call.id, argsText: piece }),
      ),
      { type: 'tool_call_end', id: call.id },
    ]),
  ];
  const parts: ModelStreamPart[] = [];
  let started = 0; // calls whose start was emitted; call lanes start at index 2
  let pick = 0;
  for (;;) {
    const open = lanes
      .map((lane, index) => ({ lane, index }))
      .filter(({ lane, index }) => lane.length > 0 && (index < 2 || index - 2 <= started));
    if (open.length === 0) break;
    const chosen = open[(picks[pick++ % Math.max(picks.length, 1)] ?? 0) % open.length];
    if (chosen === undefined) break;
    const part = chosen.lane.shift() as ModelStreamPart;
    if (part.type === 'tool_call_start') started += 1;
    parts.push(part);
  }
  parts.push(response.finish);
  return parts;
}

function expected(response: Logical): ModelResponse {
  const toolCalls: ToolCall[] = response.calls.map((call) => {
    if (call.argsText.trim() === '') return { id: call.id, name: call.name, input: {} };
    try {
      return { id: call.id, name: call.name, input: JSON.parse(call.argsText) as JsonValue };
    } catch {
      return {
        id: call.id,
        name: call.name,
        input: call.argsText,
        inputError: expect.stringContaining('not valid JSON') as unknown as string,
      };
    }
  });
  const { usage, finishReason, modelId } = response.finish;
  return {
    text: response.text,
    toolCalls,
    ...(response.reasoning === '' ? {} : { reasoning: response.reasoning }),
    ...(usage === undefined ? {} : { usage }),
    ...(finishReason === undefined ? {} : { finishReason }),
    ...(modelId === undefined ? {} : { modelId }),
  };
}

function run(parts: readonly ModelStreamPart[]): { response: ModelResponse; text: string; toolCalls: ToolCall[] } {
  const aggregator = createAggregator();
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const part of parts) {
    const event = aggregator.push(part);
    if (event?.type === 'text_delta') text += event.text;
    if (event?.type === 'tool_call') toolCalls.push(event.call);
  }
  return { response: aggregator.finish(), text, toolCalls };
}

const splitting = fc.record({
  cuts: fc.array(fc.array(fc.nat(), { maxLength: 8 }), { maxLength: 8 }),
  picks: fc.array(fc.nat(), { maxLength: 30 }),
});

describe('aggregate (property)', () => {
  it('any valid part sequence aggregates to the same response, however it is split and interleaved', () => {
    testLog(`aggregate split-invariance: numRuns = ${NUM_RUNS}`);
    fc.assert(
      fc.property(logical, splitting, splitting, (response, first, second) => {
        const a = run(partsFor(response, first.cuts, first.picks));
        const b = run(partsFor(response, second.cuts, second.picks));
        expect(a.response).toEqual(expected(response));
        expect(b.response).toEqual(a.response);
        // The events add up to the same thing: the deltas to the text, one tool_call per call.
        expect(a.text).toBe(response.text);
        expect([...a.toolCalls].sort((x, y) => (x.id < y.id ? -1 : 1))).toEqual(
          [...a.response.toolCalls].sort((x, y) => (x.id < y.id ? -1 : 1)),
        );
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
