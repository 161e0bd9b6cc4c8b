// Many workers on one store: claims up to free capacity in one statement, wake-ups instead of
// polling, retries parked in the database, a cap per agent across workers, draining with a
// deadline, and what the observer hears. On PGlite in memory (workers of one process, woken
// in-process) and on Postgres when TURNKIT_TEST_POSTGRES_URL is set (woken by LISTEN/NOTIFY).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Model, ModelRequest, ModelResponse } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import { createWorker, describeWorkerEvent, openStore, type Store, type WorkerEvent } from '@turnkit/store';
import { testLog } from '../../../test-log.js';
import { dropSchema, POSTGRES_URL, scratchSchema, WHY_SKIPPED } from './postgres.js';

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Calls `tool` once, then answers 'done'; `gate` holds each model call until it resolves. */
function toolModel(tool: string, gate?: () => Promise<void>): Model {
  return {
    async generate(request: ModelRequest): Promise<ModelResponse> {
      await gate?.();
      if (request.messages.some((m) => m.role === 'tool')) return { text: 'done', toolCalls: [] };
      return { text: '', toolCalls: [{ id: 'c1', name: tool, input: {} }] };
    },
  };
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 2000; i += 1) {
    if (await check()) return;
    await pause(10);
  }
  throw new Error(`gave up waiting for ${what}`);
}

const allEnded = (store: Store, ids: readonly string[]) => async (): Promise<boolean> => {
  const turns = await Promise.all(ids.map((id) => store.get(id)));
  return turns.every((t) => t !== null && ['stopped', 'failed', 'cancelled'].includes(t.status));
};

function suite(name: string, open: () => Promise<Store>, skip: string | false, cleanup?: () => Promise<void>): void {
  describe.skipIf(skip !== false)(`workers on ${name}${skip === false ? '' : ` (skipped: ${skip})`}`, () => {
    let store: Store;
    beforeAll(async () => void (store = await open()));
    afterAll(async () => {
      await store?.close();
      await cleanup?.();
    });

    it('claimMany takes the oldest runnable turns up to the limit, each once, with a new fencing token', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i += 1) ids.push(await store.submit({ agent: 'nobody', input: `t${i}` }));
      const [a, b] = await Promise.all([
        store.claimMany({ owner: 'a', leaseMs: 60_000, limit: 3 }),
        store.claimMany({ owner: 'b', leaseMs: 60_000, limit: 3 }),
      ]);
      const taken = [...(a ?? []), ...(b ?? [])].map((c) => c.lease.id);
      // SKIP LOCKED: the two claims split the five turns between them, none taken twice.
      expect([...taken].sort()).toEqual([...ids].sort());
      expect(new Set(taken).size).toBe(5);
      expect((a ?? []).length).toBeLessThanOrEqual(3);
      expect([...(a ?? []), ...(b ?? [])].every((c) => c.lease.token === 1)).toBe(true);
      for (const c of [...(a ?? []), ...(b ?? [])])
        await store.commit(c.lease, { fail: { kind: 'test', message: 'x' }, release: true });
      await expect(store.claimMany({ owner: 'a', leaseMs: 1000, limit: 0 })).rejects.toThrow(/limit must be a whole number/);
      await expect(store.claimMany({ owner: 'a', leaseMs: 1000, limit: 1, caps: { x: 0 } })).rejects.toThrow(
        /cap of agent 'x' must be a whole number >= 1/,
      );
    });

    it('a started worker is woken by submit and decide, not by polling, and claims about once per runnable turn', async () => {
      const pay = defineTool({
        name: 'pay',
        description: 'Pays.',
        input: z.object({}),
        needsApproval: true,
        execute: () => 'paid',
      });
      const events: WorkerEvent[] = [];
      const worker = createWorker({
        store,
        agents: { payer: { model: toolModel('pay'), tools: [pay] } },
        pollMs: 600_000, // only wake-ups can make progress in this test
        observer: (event) => void events.push(event),
      });
      worker.start();
      const ids = await Promise.all([0, 1, 2].map((i) => store.submit({ agent: 'payer', input: `pay ${i}` })));
      await waitFor(
        async () => (await Promise.all(ids.map((id) => store.get(id)))).every((t) => t?.parked.length === 1),
        'parking',
      );
      for (const id of ids) await store.decide(id, { c1: { type: 'approve' } });
      await waitFor(allEnded(store, ids), 'the approved turns');
      const stats = worker.stats();
      await worker.stop();
      // Each turn was runnable twice (submitted, decided): six claims of a turn; empty claims stay few.
      expect(stats).toMatchObject({ claimed: 6, finished: 3, parked: 3, held: 0 });
      expect(stats.claims).toBeLessThanOrEqual(2 * stats.claimed + 2);
      testLog(`${name}: wake-ups: ${stats.claims} claim statements for ${stats.claimed} claims of 3 turns`);
      expect(events[0]).toEqual({ type: 'started', worker: worker.id });
      expect(events.at(-1)).toEqual({ type: 'stopped' });
      expect(events.filter((e) => e.type === 'left').map((e) => (e as { how: string }).how)).toContain('finished');
      const line = describeWorkerEvent({ type: 'claimed', turnId: 't1', agent: 'payer', token: 3 }, stats);
      expect(line).toBe('claimed t1 (agent payer, token 3) · held 0, claimed 6, finished 3');
    });

    it('a model call to retry waits in the database, not in the worker, and runs again when due', async () => {
      let calls = 0;
      const flaky: Model = {
        async generate(): Promise<ModelResponse> {
          calls += 1;
          if (calls === 1) throw Object.assign(new Error('rate limited'), { retryable: true, data: { retryAfterMs: 300 } });
          return { text: 'ok', toolCalls: [] };
        },
      };
      const worker = createWorker({ store, agents: { flaky: { model: flaky, limits: { modelRetryBackoffMs: 300 } } } });
      const id = await store.submit({ agent: 'flaky', input: 'hi' });
      await worker.runUntilIdle();
      const turn = await store.get(id);
      expect(turn?.status).toBe('stopped');
      expect(calls).toBe(2);
      expect(worker.stats()).toMatchObject({ retrying: 1, finished: 1, claimed: 2, held: 0 });
      expect(turn?.transcript.at(-1)).toMatchObject({ role: 'assistant', content: 'ok' });
      // The retry's notice was written with the parked state.
      const notices: string[] = [];
      for await (const event of store.watch(id)) if (event.type === 'notice') notices.push(event.notice.name);
      expect(notices).toContain('model_retry');
    });

    it('maxRunning caps an agent across workers; other agents still run', async () => {
      let running = 0;
      let most = 0;
      const gate = async (): Promise<void> => {
        running += 1;
        most = Math.max(most, running);
        await pause(40);
        running -= 1;
      };
      const noop = defineTool({
        name: 'noop',
        description: 'Nothing.',
        input: z.object({}),
        readOnly: true,
        execute: () => 'ok',
      });
      const agents = {
        capped: { model: toolModel('noop', gate), tools: [noop], maxRunning: 2 },
        free: { model: toolModel('noop'), tools: [noop] },
      };
      const workers = [0, 1, 2].map(() => createWorker({ store, agents, concurrency: 4, pollMs: 50 }));
      const ids = await Promise.all(
        Array.from({ length: 10 }, (_, i) => store.submit({ agent: i % 5 === 4 ? 'free' : 'capped', input: `${i}` })),
      );
      for (const w of workers) w.start();
      await waitFor(allEnded(store, ids), 'the capped turns');
      await Promise.all(workers.map((w) => w.stop()));
      expect(most).toBeLessThanOrEqual(2);
      expect(most).toBeGreaterThanOrEqual(1);
      testLog(`${name}: maxRunning 2 across 3 workers: at most ${most} capped model calls at once`);
      expect(() => createWorker({ store, agents: { a: { model: toolModel('x'), maxRunning: 0 } } })).toThrow(
        /agent 'a' option `maxRunning` must be a whole number >= 1/,
      );
    });

    it('stop with a deadline hands back a turn whose tool hangs; another worker ends it with `interrupted`', async () => {
      let started = 0;
      const hang = defineTool({
        name: 'hang',
        description: 'Never ends by itself.',
        input: z.object({}),
        readOnly: true,
        execute: (_input, ctx) =>
          new Promise<string>((_resolve, reject) => {
            started += 1;
            ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
          }),
      });
      const agents = { hanger: { model: toolModel('hang'), tools: [hang] } };
      const first = createWorker({ store, agents, leaseMs: 60_000 });
      const id = await store.submit({ agent: 'hanger', input: 'go' });
      first.start();
      await waitFor(async () => started === 1, 'the tool to start');
      await first.stop({ deadlineMs: 20 });
      expect(first.stats()).toMatchObject({ handedBack: 1, held: 0 });
      // Handed back: no lease to wait for (60 s), so the next worker takes it at once.
      const second = createWorker({ store, agents, leaseMs: 60_000 });
      await second.runUntilIdle();
      const turn = await store.get(id);
      expect(turn?.status).toBe('stopped');
      expect(started).toBe(1);
      const result = turn?.transcript.find((m) => m.role === 'tool');
      expect(result).toMatchObject({ result: { isError: true, output: expect.stringMatching(/^interrupted/) } });
      await expect(first.stop({ deadlineMs: -1 })).rejects.toThrow(/deadlineMs/);
    });
  });
}

suite('PGlite (memory://)', () => openStore('memory://'), false);

const schema = scratchSchema('workers');
suite(
  'Postgres',
  () => openStore(POSTGRES_URL ?? '', { schema }),
  POSTGRES_URL === undefined ? WHY_SKIPPED : false,
  () => dropSchema(schema),
);
