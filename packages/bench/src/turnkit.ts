// turnkit on the scenario, as users write it: an `async` tool and `scriptedModel` from
// @turnkit/testing, through an agent defined once (`createAgent`), `runTurn` and `streamTurn`; and,
// labelled, `runTurn` with a synchronous tool and a hand-written Model that never reads its signal
// (the counterpart of the peers' mock models). Plus the turnkit-only figures that need an
// interpreter: heap per suspended turn and streaming throughput.
import type { Message, Model, ModelResponse, ModelStreamPart } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import { createAgent, runTurn, type TurnResult } from '@turnkit/inline';
import { streamTurn } from '@turnkit/stream';
import { call, scriptedModel, text, toolCalls, type ScriptStep } from '@turnkit/testing';
import { z } from 'zod';
import { ADD_INPUTS, EXPECTED_TEXT, type BenchSystem, type TurnOutcome } from './scenario.js';
import type { SuspendedHeapFigure } from './report-types.js';
import { median } from './stats.js';

const addInput = z.object({ a: z.number(), b: z.number() });
const add = defineTool({ name: 'add', description: 'add', input: addInput, readOnly: true, execute: ({ a, b }) => a + b });
const addAsync = defineTool({
  name: 'add',
  description: 'add',
  input: addInput,
  readOnly: true,
  execute: async ({ a, b }) => a + b,
});
const SCRIPT: readonly ScriptStep[] = [...ADD_INPUTS.map((input) => toolCalls(call('add', input))), text(EXPECTED_TEXT)];
const addWithApproval = defineTool({
  name: 'add',
  description: 'add',
  input: addInput,
  needsApproval: true,
  execute: ({ a, b }) => a + b,
});

const REPLIES: readonly ModelResponse[] = [
  ...ADD_INPUTS.map((input, i) => ({ text: '', toolCalls: [{ id: `c${i}`, name: 'add', input }], finishReason: 'tool_calls' })),
  { text: EXPECTED_TEXT, toolCalls: [], finishReason: 'stop' },
];
const STREAMED: readonly (readonly ModelStreamPart[])[] = [
  ...ADD_INPUTS.map((input, i): ModelStreamPart[] => [
    { type: 'tool_call_start', id: `c${i}`, name: 'add' },
    { type: 'tool_call_delta', id: `c${i}`, argsText: JSON.stringify(input) },
    { type: 'tool_call_end', id: `c${i}` },
    { type: 'finish', finishReason: 'tool_calls' },
  ]),
  [
    { type: 'text_delta', text: EXPECTED_TEXT },
    { type: 'finish', finishReason: 'stop' },
  ],
];

function missingReply(call: number): Error {
  return new Error(
    `The benchmark model has ${REPLIES.length} replies and was called a ${call + 1}th time; the turn did not follow the scenario.`,
  );
}

/** A fresh scripted model for one turn: the scenario's three replies, in order. */
export function scenarioModel(): Model {
  let calls = 0;
  return {
    generate: async () => {
      const reply = REPLIES[calls];
      if (!reply) throw missingReply(calls);
      calls++;
      return reply;
    },
    stream: async function* () {
      const parts = STREAMED[calls];
      if (!parts) throw missingReply(calls);
      calls++;
      yield* parts;
    },
  };
}

function toolOutputs(transcript: readonly Message[]): unknown[] {
  return transcript.flatMap((m) => (m.role === 'tool' ? [m.result.output] : []));
}

interface RunResult {
  readonly status: string;
  readonly text: string;
  readonly transcript: readonly Message[];
  readonly error?: { readonly message: string } | undefined;
}

function outcomeOf(result: RunResult): TurnOutcome {
  // A turn that did not stop shows its status in the text, so verification names it.
  const text = result.status === 'stopped' ? result.text : `[${result.status}] ${result.error?.message ?? ''}`;
  return { toolResults: toolOutputs(result.transcript), text };
}

/** The name of the row every ratio of the turnkit systems is read against. */
export const TURNKIT_REFERENCE = 'turnkit agent.run';

/**
 * The turnkit systems, the reference first. A scripted model's script is used up by one turn, so
 * each turn gets a fresh one (the agent takes it as a per-run option); everything else of the
 * agent is built once.
 */
export function turnkitSystems(): BenchSystem[] {
  const agent = createAgent({ model: scriptedModel(SCRIPT), tools: [addAsync] });
  return [
    {
      name: TURNKIT_REFERENCE,
      kind: 'turnkit',
      run: async () => outcomeOf(await agent.run('go', { model: scriptedModel(SCRIPT) })),
    },
    {
      name: 'turnkit runTurn',
      kind: 'turnkit',
      run: async () => outcomeOf(await runTurn({ model: scriptedModel(SCRIPT), tools: [addAsync], input: 'go' })),
    },
    {
      name: 'turnkit streamTurn',
      kind: 'turnkit',
      run: async () => {
        const stream = streamTurn({ model: scriptedModel(SCRIPT), tools: [addAsync], input: 'go' });
        for await (const event of stream) void event;
        return outcomeOf(await stream.result);
      },
    },
    {
      name: 'turnkit runTurn (sync tool, hand model)',
      kind: 'turnkit',
      run: async () => outcomeOf(await runTurn({ model: scenarioModel(), tools: [add], input: 'go' })),
    },
  ];
}

/**
 * Parks `turns` turns for approval (the first `add` call needs it and no `approve` is given),
 * keeps each one's state and transcript, and reports the heap they retain after a full GC.
 */
export async function measureSuspendedHeap(turns: number, gc: () => void): Promise<SuspendedHeapFigure> {
  // The whole suspended result, as a caller keeps it until it resumes the turn: its state and
  // transcript, the pending calls, the grants and budget counts to restore.
  const park = async (): Promise<TurnResult> => {
    const result = await runTurn({ model: scenarioModel(), tools: [addWithApproval], input: 'go' });
    if (result.status !== 'suspended' || result.pending?.length !== 1) {
      throw new Error(
        `A turn whose add call needs approval ended '${result.status}' instead of 'suspended' with one pending call; the heap figure would be wrong.`,
      );
    }
    return result;
  };
  // Warm up first so compiled code and caches are in the baseline, not in the per-turn figure.
  for (let i = 0; i < 200; i++) await park();
  const kept = new Array<TurnResult>(turns);
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < turns; i++) kept[i] = await park();
  gc();
  gc();
  const after = process.memoryUsage().heapUsed;
  const jsonBytes = Buffer.byteLength(JSON.stringify(kept[0]));
  return { turns: kept.length, bytesPerTurn: (after - before) / turns, jsonBytesPerTurn: jsonBytes };
}

/** A model whose one reply streams `deltas` one-character text deltas, built before any timing. */
function deltaModel(deltas: number): Model {
  const parts: ModelStreamPart[] = [];
  for (let i = 0; i < deltas; i++) parts.push({ type: 'text_delta', text: 'x' });
  parts.push({ type: 'finish', finishReason: 'stop' });
  return {
    generate: async () => {
      throw new Error('The streaming benchmark model only streams; streamTurn called generate().');
    },
    stream: async function* () {
      yield* parts;
    },
  };
}

/** One streamTurn over `deltas` deltas, read to the end by a consumer that only counts. */
export async function turnkitDeltaStream(deltas: number): Promise<() => Promise<{ deltas: number; text: string }>> {
  const model = deltaModel(deltas);
  return async () => {
    const stream = streamTurn({ model, tools: [], input: 'go' });
    let seen = 0;
    for await (const event of stream) if (event.type === 'text_delta') seen++;
    const result = await stream.result;
    return { deltas: seen, text: result.text };
  };
}

type DeltaRun = () => Promise<{ deltas: number; text: string }>;

/** Deltas per second of `run` (median of `repeats`), after checking every delta arrived. */
export async function deltasPerSecond(system: string, run: DeltaRun, deltas: number, repeats: number): Promise<number> {
  const rates: number[] = [];
  for (let i = 0; i <= repeats; i++) {
    const started = process.hrtime.bigint();
    const seen = await run();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (seen.deltas !== deltas || seen.text.length !== deltas) {
      throw new Error(
        `${system} passed ${seen.deltas} of ${deltas} text deltas (final text ${seen.text.length} characters); its throughput is not comparable.`,
      );
    }
    if (i > 0) rates.push(deltas / seconds); // the first run warms up
  }
  return median(rates);
}
