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

describe('a lease renewal in flight when the worker gives the turn back', () => {
  it('never brings the lease back: the parked turn is claimable as soon as it is decided, and the worker reports nothing', async () => {
    const real = await openStore('memory://');
    try {
      const publish = defineTool({
        name: 'publish',
        description: 'Publishes.',
        input: z.object({}),
        needsApproval: true,
        execute: () => 'published',
      });
      // A renewal the worker sends before it parks the turn reaches the database only after the
      // parking write (as a renewal on another pooled connection of Postgres can), and its answer
      // comes back before the worker hears that the write committed: the store below holds it until
      // then. It renews for a minute, so a lease it brought back would still be live when the turn
      // is decided.
      let held: (() => void) | null = null;
      const renewalHeld = new Promise<void>((resolve) => {
        held = resolve;
      });
      let openGate: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => {
        openGate = resolve;
      });
      let late: Promise<unknown> = Promise.resolve();
      const store: Store = {
        ...real,
        renew(lease, leaseMs) {
          if (held === null) return real.renew(lease, leaseMs);
          held();
          held = null;
          const renewal = gate.then(() => real.renew(lease, 60_000));
          late = renewal.catch(() => undefined);
          return renewal;
        },
        async commit(lease, commit) {
          await real.commit(lease, commit);
          if (commit.release !== true) return;
          openGate();
          await late;
        },
      };
      // The model answers once a renewal is held, so that renewal is in flight when the turn parks.
      const model = scriptedModel([toolCalls(call('publish', {})), text('Published.')]);
      const waiting = {
        generate: async (...args: Parameters<typeof model.generate>) => {
          await renewalHeld;
          return model.generate(...args);
        },
      };
      const faults: unknown[] = [];
      const id = await real.submit({ agent: 'a', input: 'Publish.' });
      const worker = createWorker({
        store,
        agents: { a: { model: waiting, tools: [publish] } },
        turnIds: [id],
        leaseMs: 30,
        onError: (error) => void faults.push(error),
      });
      await worker.runUntilIdle();
      await late;
      expect((await real.get(id))?.status).toBe('awaiting_approval');
      expect(worker.stats()).toMatchObject({ parked: 1, lost: 0 });
      await real.decide(id, { call_1: { type: 'approve' } });
      const claim = await real.claim({ owner: 'next', leaseMs: 1000, turnIds: [id] });
      expect(claim?.lease.id).toBe(id);
      expect(faults).toEqual([]);
    } finally {
      await real.close();
    }
  });
});
