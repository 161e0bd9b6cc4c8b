// A suspended result saved by turnkit with state version 1 (fixture in packages/core/test/fixtures/v1,
// plain JSON as it was written) resumes with today's resumeTurn: the state is migrated, the approved
// call runs, and the turn completes with the saved transcript carried on.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TURN_STATE_VERSION, type Message } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import { resumeTurn, type ResumeTurnOptions } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';

const saved = JSON.parse(
  readFileSync(new URL('../../core/test/fixtures/v1/result-suspended.json', import.meta.url), 'utf8'),
) as ResumeTurnOptions & {
  state: { version: number };
  transcript: Message[];
};

// The tools the fixture's turn was run with.
const add = defineTool({
  name: 'add',
  description: 'Adds.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => a + b,
});
const pay = defineTool({
  name: 'pay',
  description: 'Pays.',
  input: z.object({ amount: z.number() }),
  needsApproval: true,
  execute: async ({ amount }) => `paid ${amount}`,
});
// The fixture's script; its first step was answered before the turn suspended.
const script = () =>
  scriptedModel([toolCalls(call('add', { a: 1, b: 2 }), call('pay', { amount: 5 })), text('done')], { startAt: 1 });

const before: Message[] = [
  { role: 'system', content: 'You are a cashier.' },
  { role: 'user', content: 'Add then pay.' },
  {
    role: 'assistant',
    content: '',
    toolCalls: [
      { id: 'call_1', name: 'add', input: { a: 1, b: 2 } },
      { id: 'call_2', name: 'pay', input: { amount: 5 } },
    ],
  },
];

describe('resumeTurn with a suspended result saved by state version 1', () => {
  it('the fixture is a version 1 suspended result', () => {
    expect(saved.state.version).toBe(1);
    expect(saved.transcript).toEqual(before);
  });

  it('approved: the pay call runs and the turn stops with the whole transcript', async () => {
    const model = script();
    const result = await resumeTurn({ ...saved, model, tools: [add, pay], decisions: { call_2: { type: 'approve' } } });
    model.assertDone();
    expect(result.status).toBe('stopped');
    expect(result.output).toBe('done');
    expect(result.state.version).toBe(TURN_STATE_VERSION);
    expect(result.state.batch).toBeNull();
    expect(result.transcript).toEqual([
      ...before,
      { role: 'tool', result: { callId: 'call_1', name: 'add', output: 3, isError: false } },
      { role: 'tool', result: { callId: 'call_2', name: 'pay', output: 'paid 5', isError: false } },
      { role: 'assistant', content: 'done', toolCalls: [] },
    ]);
    // The model saw the held result and the approved call's result.
    expect(model.calls[0]?.messages.slice(3)).toEqual(result.transcript.slice(3, 5));
  });

  it('rejected: the pay call does not run and the model hears why', async () => {
    const result = await resumeTurn({
      ...saved,
      model: script(),
      tools: [add, pay],
      decisions: { call_2: { type: 'reject', reason: 'over the limit' } },
    });
    expect(result.status).toBe('stopped');
    expect(result.transcript[4]).toEqual({
      role: 'tool',
      result: {
        callId: 'call_2',
        name: 'pay',
        output: 'rejected: over the limit. A person declined this call; do not retry it unchanged.',
        isError: true,
        errorKind: 'denied',
      },
    });
  });

  it('without decisions it stays suspended, its state now the current version, pending the pay call', async () => {
    const result = await resumeTurn({ ...saved, model: script(), tools: [add, pay] });
    expect(result.status).toBe('suspended');
    expect(result.state.status).toBe('awaiting_approval');
    expect(result.state.version).toBe(TURN_STATE_VERSION);
    expect(result.pending).toEqual([
      {
        call: { id: 'call_2', name: 'pay', input: { amount: 5 } },
        input: { amount: 5 },
        reason: "tool 'pay' needs approval",
      },
    ]);
  });
});
