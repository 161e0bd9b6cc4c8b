import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { defineTool } from '@turnkit/dispatch';
import { createWorker, openStore, type Store } from '@turnkit/store';
import { runTurn } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';
import type { Effect } from '@turnkit/core';

const store = { claim: () => Promise.resolve(null) } as unknown as Store;

describe('createWorker and the idempotent tool option', () => {
  it('checks its agents and options, naming the bad one', () => {
    expect(() => createWorker({ store, agents: { a: { model: {} as never } } })).toThrow(/agent 'a' needs a `model`/);
    expect(() => createWorker({ store, agents: { a: { model: scriptedModel([]), limits: { maxIterations: 0 } } } })).toThrow(
      /agent 'a' has bad limits/,
    );
    expect(() => createWorker({ store, agents: {}, leaseMs: 1 })).toThrow(/leaseMs/);
    expect(() => createWorker({ store: {} as never, agents: {} })).toThrow(/store from openStore/);
  });

  it('a worker given turnIds runs only those turns', async () => {
    const real = await openStore('memory://');
    try {
      const agents = { a: { model: scriptedModel([text('one')]) }, b: { model: scriptedModel([text('two')]) } };
      const mine = await real.submit({ agent: 'a', input: 'mine' });
      const other = await real.submit({ agent: 'b', input: 'not mine' });
      await createWorker({ store: real, agents: { a: agents.a }, turnIds: [mine] }).runUntilIdle();
      expect((await real.get(mine))?.status).toBe('stopped');
      expect((await real.get(other))?.status).toBe('ready');
      expect(() => createWorker({ store: real, agents, turnIds: 'x' as never })).toThrow(/turnIds/);
    } finally {
      await real.close();
    }
  });

  it('defineTool takes `idempotent` (default false) and rejects a non-boolean', () => {
    const base = { name: 't', description: 'T.', input: z.object({}), execute: () => 1 };
    expect(defineTool(base).idempotent).toBe(false);
    expect(defineTool({ ...base, idempotent: true }).idempotent).toBe(true);
    expect(() => defineTool({ ...base, idempotent: 'yes' as never })).toThrow(/idempotent must be a boolean/);
  });

  it('writes messages and notices in the order the turn made them (turn started before the model’s reply), as inline runs them', async () => {
    const add = defineTool({
      name: 'add',
      description: 'Adds.',
      input: z.object({ a: z.number(), b: z.number() }),
      readOnly: true,
      execute: ({ a, b }) => a + b,
    });
    const script = () => scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]);
    const label = (e: { message: { role: string } } | { notice: { name: string } }): string =>
      'message' in e ? `message ${e.message.role}` : `notice ${e.notice.name}`;
    const inline: string[] = [];
    await runTurn({
      model: script(),
      tools: [add],
      input: 'What is 1 + 2?',
      onEffect: (effect: Effect) => {
        if (effect.type === 'append') inline.push(label(effect));
        if (effect.type === 'emit') inline.push(label(effect));
      },
    });
    const real = await openStore('memory://');
    try {
      const id = await real.submit({ agent: 'a', input: 'What is 1 + 2?' });
      await createWorker({ store: real, agents: { a: { model: script(), tools: [add] } } }).runUntilIdle();
      const stored: string[] = [];
      for await (const event of real.watch(id)) if (event.type !== 'status') stored.push(label(event));
      expect(stored.indexOf('notice turn_started')).toBeLessThan(stored.indexOf('message assistant'));
      expect(stored).toEqual(inline);
    } finally {
      await real.close();
    }
  });
});
