import { describe, expect, it } from 'vitest';
import type { Effect, Notice } from '@turnkit/core';
import { runTurn } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';
import { add } from './run-tools.ts';

describe('runTurn: observers', () => {
  it('reports notices and every effect, and ignores observers that throw', async () => {
    const notices: Notice['name'][] = [];
    const effects: Effect['type'][] = [];
    const result = await runTurn({
      model: scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]),
      tools: [add],
      input: 'hi',
      onNotice: (n) => {
        notices.push(n.name);
        throw new Error('observer bug');
      },
      onEffect: (e) => {
        effects.push(e.type);
      },
      onStep: () => {
        throw new Error('another observer bug');
      },
    });
    expect(result.status).toBe('stopped');
    expect(notices).toEqual(['turn_started', 'iteration', 'steering', 'iteration']);
    expect(effects[0]).toBe('append');
    expect(effects.at(-1)).toBe('done');
    expect(effects).toContain('dispatch_tools');
  });
});
