import { describe, expect, it } from 'vitest';
import type { CompactInfo } from '@turnkit/core/internal';
import type { Message } from '@turnkit/core';
import { keepLastMessages } from '@turnkit/inline';

const info: CompactInfo = {
  round: 1,
  usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, cost: 0, modelCalls: 1, toolCalls: 1 },
};
const sys: Message = { role: 'system', content: 'rules' };
const user: Message = { role: 'user', content: 'go' };
const asks: Message = {
  role: 'assistant',
  content: '',
  toolCalls: [
    { id: 'a', name: 'add', input: {} },
    { id: 'b', name: 'add', input: {} },
  ],
};
const resultA: Message = { role: 'tool', result: { callId: 'a', name: 'add', output: 1, isError: false } };
const resultB: Message = { role: 'tool', result: { callId: 'b', name: 'add', output: 2, isError: false } };

describe('keepLastMessages', () => {
  it('keeps system messages, the first user message and the last n others', async () => {
    const done: Message = { role: 'assistant', content: 'done', toolCalls: [] };
    const later: Message = { role: 'user', content: 'and then?' };
    // n = 1 used to keep only `done`, dropping the one user message (the task).
    expect(await keepLastMessages(1)([sys, user, done], info)).toEqual([sys, user, done]);
    expect(await keepLastMessages(1)([sys, user, done, later, done], info)).toEqual([sys, user, done]);
  });

  it('moves the cut back so tool results keep their assistant message', async () => {
    // The last 1 message is resultB; keeping it alone would orphan it.
    expect(await keepLastMessages(1)([sys, user, asks, resultA, resultB], info)).toEqual([sys, user, asks, resultA, resultB]);
    expect(await keepLastMessages(2)([sys, user, asks, resultA, resultB], info)).toEqual([sys, user, asks, resultA, resultB]);
    const done: Message = { role: 'assistant', content: 'done', toolCalls: [] };
    expect(await keepLastMessages(1)([sys, user, asks, resultA, resultB, done], info)).toEqual([sys, user, done]);
  });

  it('returns everything when there are n messages or fewer', async () => {
    expect(await keepLastMessages(5)([sys, user], info)).toEqual([sys, user]);
  });

  it('refuses a count that is not a whole number >= 1', () => {
    expect(() => keepLastMessages(0)).toThrow(RangeError);
    expect(() => keepLastMessages(1.5)).toThrow(/whole number/);
  });
});
