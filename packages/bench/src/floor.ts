// The floor: a bare loop doing only the scenario's work, with nothing a library adds (no state
// machine, no validation of model output, no dispatcher, no cancellation): three awaited model
// replies, two zod parses of the tool input, two awaited async tool calls and a transcript. Every
// other system's time is read against it.
import { z } from 'zod';
import { ADD_INPUTS, EXPECTED_TEXT, type BenchSystem, type TurnOutcome } from './scenario.js';

interface FloorReply {
  readonly text: string;
  readonly toolCalls: readonly { readonly id: string; readonly name: string; readonly input: unknown }[];
}
type FloorMessage =
  | { readonly role: 'user' | 'assistant'; readonly content: string; readonly toolCalls?: FloorReply['toolCalls'] }
  | { readonly role: 'tool'; readonly callId: string; readonly output: number };

const REPLIES: readonly FloorReply[] = [
  ...ADD_INPUTS.map((input, i) => ({ text: '', toolCalls: [{ id: `c${i}`, name: 'add', input }] })),
  { text: EXPECTED_TEXT, toolCalls: [] },
];
const addInput = z.object({ a: z.number(), b: z.number() });
const add = async ({ a, b }: { a: number; b: number }): Promise<number> => a + b;

async function reply(call: number): Promise<FloorReply> {
  const next = REPLIES[call];
  if (next === undefined) throw new Error(`The floor loop asked for reply ${call + 1} of ${REPLIES.length}.`);
  return next;
}

/** One turn of the bare loop. */
export async function floorTurn(input: string): Promise<TurnOutcome> {
  const transcript: FloorMessage[] = [{ role: 'user', content: input }];
  const toolResults: number[] = [];
  for (let call = 0; ; call++) {
    const { text, toolCalls } = await reply(call);
    transcript.push({ role: 'assistant', content: text, toolCalls });
    if (toolCalls.length === 0) return { toolResults, text };
    for (const toolCall of toolCalls) {
      const output = await add(addInput.parse(toolCall.input));
      toolResults.push(output);
      transcript.push({ role: 'tool', callId: toolCall.id, output });
    }
  }
}

export const floorSystem: BenchSystem = { name: 'floor (bare loop)', kind: 'floor', run: () => floorTurn('go') };
