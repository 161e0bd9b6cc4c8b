// Threads of stored turns, on PGlite (in memory) and on a real Postgres: one turn at a time in
// the order submitted (queued or refused), a thread read and watched, closed (its open turns
// cancelled, its grants ended, no more turns), a compaction that leaves the log whole, and the
// bytes a turn writes not growing with the thread.

import type { Message, Model, ModelRequest, ModelResponse } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import {
  type AgentDefinition,
  createWorker,
  openStore,
  type Store,
  ThreadBusyError,
  ThreadClosedError,
  ThreadNotFoundError,
  type ThreadWatchEvent,
} from '@turnkit/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dropSchema, POSTGRES_URL, scratchSchema, WHY_SKIPPED } from './postgres.js';

const refund = defineTool({
  name: 'refund',
  description: 'Refunds an order.',
  input: z.object({ order: z.string() }),
  needsApproval: true,
  execute: ({ order }) => `refunded ${order}`,
});

/**
 * A model that answers a user message with its text echoed, and "refund X" with a refund call
 * then "Refunded." (so a script never runs out however turns are interleaved). `active` counts
 * the model calls in flight, `most` the largest count seen.
 */
function echoModel(): Model & { most: number; requests: ModelRequest[] } {
  let active = 0;
  const model = {
    most: 0,
    requests: [] as ModelRequest[],
    async generate(request: ModelRequest): Promise<ModelResponse> {
      model.requests.push(request);
      active += 1;
      model.most = Math.max(model.most, active);
      try {
        // Lets other turns' work interleave here, if the store allowed it.
        await new Promise((resolve) => setImmediate(resolve));
        const last = request.messages.at(-1);
        if (last?.role === 'tool') return { text: 'Refunded.', toolCalls: [] };
        const asked = last?.role === 'user' ? last.content : '';
        const order = /^refund (\S+)/.exec(asked)?.[1];
        if (order !== undefined)
          return { text: '', toolCalls: [{ id: `call_${request.messages.length}`, name: 'refund', input: { order } }] };
        return { text: `You said: ${asked}`, toolCalls: [] };
      } finally {
        active -= 1;
      }
    },
  };
  return model;
}

const lines = (transcript: readonly Message[]): string[] =>
  transcript.map((m) =>
    m.role === 'tool'
      ? `tool: ${String(m.result.output)}`
      : m.role === 'assistant' && m.toolCalls.length > 0
        ? `assistant: [${m.toolCalls.map((c) => c.name).join(', ')}]`
        : `${m.role}: ${'content' in m ? m.content : ''}`,
  );

function threadTests(name: string, open: () => Promise<Store>, cleanup?: () => Promise<void>): void {
  describe(`threads: ${name}`, () => {
    let store: Store;
    let n = 0;
    /** A fresh agent name (and thread id) per test: the store is shared. */
    const fresh = (): { agentName: string; thread: string } => {
      n += 1;
      return { agentName: `support-${n}`, thread: `thread-${n}` };
    };
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store?.close();
      await cleanup?.();
    });

    it('list and listThreads page with and without a cursor or a status: every item once, in order', async () => {
      const { agentName, thread } = fresh();
      const ids = [
        await store.submit({ agent: agentName, input: 'one', thread: `${thread}-a` }),
        await store.submit({ agent: agentName, input: 'two', thread: `${thread}-b` }),
        await store.submit({ agent: agentName, input: 'three', thread: `${thread}-c` }),
      ];
      const turns: string[] = [];
      const queued: string[] = [];
      for (const [status, out] of [
        [undefined, turns],
        ['ready', queued],
      ] as const) {
        let cursor: string | null = null;
        do {
          const page: Awaited<ReturnType<Store['list']>> = await store.list({ limit: 2, cursor, ...(status ? { status } : {}) });
          out.push(...page.turns.map((t) => t.id));
          cursor = page.cursor;
        } while (cursor !== null);
      }
      expect(turns.filter((id) => ids.includes(id))).toEqual(ids);
      expect(queued.filter((id) => ids.includes(id))).toEqual(ids);
      expect(new Set(turns).size).toBe(turns.length);
      const threads: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Awaited<ReturnType<Store['listThreads']>> = await store.listThreads({ limit: 1, cursor });
        threads.push(...page.threads.map((t) => t.id));
        cursor = page.cursor;
      } while (cursor !== null);
      expect(threads.filter((id) => id.startsWith(`${thread}-`))).toEqual([`${thread}-a`, `${thread}-b`, `${thread}-c`]);
      expect(new Set(threads).size).toBe(threads.length);
      for (const id of ids) await store.cancel(id);
    });

    it('a turn submitted while another of its thread is parked waits behind it, then goes on from its transcript', async () => {
      const { agentName, thread } = fresh();
      const model = echoModel();
      const agents = { [agentName]: { model, tools: [refund] } };
      const first = await store.submit({ agent: agentName, input: 'refund A1', thread });
      await createWorker({ store, agents }).runUntilIdle();
      const second = await store.submit({ agent: agentName, input: 'hello', thread });
      await createWorker({ store, agents }).runUntilIdle();
      // The first is parked; the second was not started.
      expect((await store.get(first))?.status).toBe('awaiting_approval');
      expect((await store.get(second))?.status).toBe('ready');
      const parked = await store.get({ thread });
      expect(parked).toMatchObject({ status: 'open', current: first, turns: [{ id: first }, { id: second }] });
      expect(parked?.parked.map((p) => p.call.name)).toEqual(['refund']);
      expect(parked?.turns.map((t) => t.thread)).toEqual([thread, thread]);

      await store.decide(first, Object.fromEntries(parked?.parked.map((p) => [p.call.id, { type: 'approve' }]) ?? []));
      await createWorker({ store, agents }).runUntilIdle();
      expect((await store.get(first))?.status).toBe('stopped');
      expect((await store.get(second))?.status).toBe('stopped');
      const done = await store.get({ thread });
      expect(lines(done?.transcript ?? [])).toEqual([
        'user: refund A1',
        'assistant: [refund]',
        'tool: refunded A1',
        'assistant: Refunded.',
        'user: hello',
        'assistant: You said: hello',
      ]);
      expect(done?.current).toBeNull();
      // The second turn's own log holds its own messages only.
      expect(lines((await store.get(second))?.transcript ?? [])).toEqual(['user: hello', 'assistant: You said: hello']);
      // Its model request carried the first turn's conversation and its own message.
      expect(model.requests.at(-1)?.messages).toHaveLength(5);
    });

    it("whenBusy: 'refuse' throws ThreadBusyError naming the open turn, and stores nothing", async () => {
      const { agentName, thread } = fresh();
      const first = await store.submit({ agent: agentName, input: 'one', thread });
      const before = (await store.get({ thread }))?.turns.length;
      const refused = store.submit({ agent: agentName, input: 'two', thread, whenBusy: 'refuse' });
      await expect(refused).rejects.toBeInstanceOf(ThreadBusyError);
      await expect(refused).rejects.toMatchObject({ threadId: thread, turnId: first, status: 'ready' });
      await expect(refused).rejects.toThrow(/is busy: its turn '.*' has not ended \(status ready\)/);
      expect((await store.get({ thread }))?.turns.length).toBe(before);
      await createWorker({ store, agents: { [agentName]: { model: echoModel() } } }).runUntilIdle();
      // Once it ended, the thread takes a refusing submit.
      const next = await store.submit({ agent: agentName, input: 'two', thread, whenBusy: 'refuse' });
      expect((await store.get({ thread }))?.turns.map((t) => t.id)).toEqual([first, next]);
    });

    it('checks thread options: a bad id, whenBusy without a thread, another agent', async () => {
      const { agentName, thread } = fresh();
      await expect(store.submit({ agent: agentName, thread: 'no spaces' })).rejects.toThrow(/option `thread` must be 1 to 200/);
      await expect(store.submit({ agent: agentName, whenBusy: 'refuse' })).rejects.toThrow(/give `thread` too/);
      await expect(store.submit({ agent: agentName, thread, whenBusy: 'later' as never })).rejects.toThrow(/'wait' or 'refuse'/);
      await store.submit({ agent: agentName, thread });
      await expect(store.submit({ agent: 'someone-else', thread })).rejects.toThrow(
        new RegExp(`thread '${thread}' belongs to agent '${agentName}', not 'someone-else'`),
      );
      await expect(store.get({ thread: 'no-such-thread' })).resolves.toBeNull();
      await expect(store.get({ nope: 1 } as never)).rejects.toThrow(/turn's id or \{ thread: id \}/);
    });

    it('closing a thread cancels its open turns, ends its grants and refuses more turns', async () => {
      const { agentName, thread } = fresh();
      const agents = { [agentName]: { model: echoModel(), tools: [refund] } };
      const first = await store.submit({ agent: agentName, input: 'refund B1', thread });
      await createWorker({ store, agents }).runUntilIdle();
      const [call] = (await store.get(first))?.parked ?? [];
      await store.decide(first, { [call?.call.id ?? '']: { type: 'approve', remember: 'session' } });
      await createWorker({ store, agents }).runUntilIdle();
      expect((await store.get({ thread }))?.grants).toEqual([{ scope: 'session' }]);
      // The grant applies to the thread's next turn: its refund does not park.
      const second = await store.submit({ agent: agentName, input: 'refund B2', thread });
      await createWorker({ store, agents }).runUntilIdle();
      expect((await store.get(second))?.status).toBe('stopped');
      // Nowhere else: another thread of the agent parks its refund.
      const other = await store.submit({ agent: agentName, input: 'refund C1', thread: `${thread}-other` });
      const loose = await store.submit({ agent: agentName, input: 'refund D1' });
      await createWorker({ store, agents }).runUntilIdle();
      expect((await store.get(other))?.status).toBe('awaiting_approval');
      expect((await store.get(loose))?.status).toBe('awaiting_approval');

      const third = await store.submit({ agent: agentName, input: 'refund B3', thread: `${thread}-other` });
      expect(await store.closeThread(`${thread}-other`, 'customer left')).toBe(true);
      expect(await store.closeThread(`${thread}-other`)).toBe(false);
      await createWorker({ store, agents }).runUntilIdle();
      expect((await store.get(other))?.status).toBe('cancelled');
      expect((await store.get(third))?.status).toBe('cancelled');
      const closed = await store.get({ thread: `${thread}-other` });
      expect(closed).toMatchObject({ status: 'closed', closeReason: 'customer left', current: null, grants: [] });
      expect(closed?.closedAt).toEqual(expect.any(String));
      await expect(store.submit({ agent: agentName, input: 'more', thread: `${thread}-other` })).rejects.toBeInstanceOf(
        ThreadClosedError,
      );
      expect(await store.closeThread(thread)).toBe(true);
      expect((await store.get({ thread }))?.grants).toEqual([]);
      await expect(store.closeThread('no-such-thread')).rejects.toBeInstanceOf(ThreadNotFoundError);
    });

    it('watch({ thread }) follows every turn in order, with its id, until the closed thread has ended', async () => {
      const { agentName, thread } = fresh();
      const agents = { [agentName]: { model: echoModel() } };
      const first = await store.submit({ agent: agentName, input: 'one', thread });
      const second = await store.submit({ agent: agentName, input: 'two', thread });
      await createWorker({ store, agents }).runUntilIdle();
      await store.closeThread(thread);
      const events: ThreadWatchEvent[] = [];
      for await (const event of store.watch({ thread }, { pollMs: 5 })) events.push(event);
      const seen = events.map(
        (e) =>
          `${e.turnId === first ? 1 : 2} ${e.type === 'message' ? e.message.role : e.type === 'status' ? e.status : 'notice'}`,
      );
      expect(seen.filter((s) => !s.endsWith('notice'))).toEqual([
        '1 user',
        '1 assistant',
        '1 stopped',
        '2 user',
        '2 assistant',
        '2 stopped',
      ]);
      expect(events.map((e) => e.turnId)).toContain(second);
      expect((await store.listThreads()).threads.find((t) => t.id === thread)).toMatchObject({
        agent: agentName,
        status: 'closed',
        turns: 2,
        current: null,
      });
    });

    it('a compaction leaves the log whole: the turn keeps every message, the thread goes on from what was kept', async () => {
      const { agentName, thread } = fresh();
      const model = echoModel();
      // Keeps the last user message on (the tool result stays with its call).
      const agent: AgentDefinition = {
        model,
        tools: [refund],
        system: 'Be brief.',
        compact: (transcript) => {
          const last = transcript.findLastIndex((m) => m.role === 'user');
          return transcript.filter((m, i) => m.role === 'system' || i >= last);
        },
      };
      const agents = { [agentName]: agent };
      const first = await store.submit({ agent: agentName, input: 'hi', thread });
      await createWorker({ store, agents }).runUntilIdle();
      const second = await store.submit({ agent: agentName, input: 'refund E1', thread });
      await createWorker({ store, agents }).runUntilIdle();
      const [call] = (await store.get(second))?.parked ?? [];
      await store.decide(second, { [call?.call.id ?? '']: { type: 'approve' } });
      await createWorker({ store, agents }).runUntilIdle();
      expect(lines((await store.get({ thread }))?.transcript ?? [])).toEqual([
        'user: refund E1',
        'assistant: [refund]',
        'tool: refunded E1',
        'assistant: Refunded.',
      ]);
      // Nothing was deleted: each turn's log keeps its messages.
      expect(lines((await store.get(first))?.transcript ?? [])).toEqual(['user: hi', 'assistant: You said: hi']);
      expect((await store.get(second))?.transcript).toHaveLength(4);
      // The answer after the compaction was asked with the kept transcript (and the system prompt).
      expect(model.requests.at(-1)?.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
      // The next turn starts from the compacted transcript.
      await store.submit({ agent: agentName, input: 'thanks', thread });
      await createWorker({ store, agents }).runUntilIdle();
      expect(model.requests.at(-1)?.messages).toHaveLength(6);
    });

    it('a turn without a thread that compacts, parks and is taken up again goes on from what the compaction kept', async () => {
      const { agentName } = fresh();
      const note = defineTool({
        name: 'note',
        description: 'Notes.',
        input: z.object({}),
        readOnly: true,
        execute: () => 'noted',
      });
      let calls = 0; // model calls so far (the compaction leaves fewer assistant messages than that)
      const model: Model = {
        async generate(): Promise<ModelResponse> {
          calls += 1;
          if (calls <= 2) return { text: '', toolCalls: [{ id: `n${calls}`, name: 'note', input: {} }] };
          if (calls === 3) return { text: '', toolCalls: [{ id: 'r1', name: 'refund', input: { order: 'F1' } }] };
          return { text: 'Done.', toolCalls: [] };
        },
      };
      const seen: number[] = [];
      // Keeps the user message and the last assistant message with its results.
      const compact = (transcript: readonly Message[]): readonly Message[] => {
        seen.push(transcript.length);
        const last = transcript.findLastIndex((m) => m.role === 'assistant');
        return transcript.filter((m, i) => m.role === 'system' || m.role === 'user' || i >= last);
      };
      const agents = { [agentName]: { model, tools: [note, refund], compact } };
      const id = await store.submit({ agent: agentName, input: 'refund F1' });
      await createWorker({ store, agents }).runUntilIdle();
      expect((await store.get(id))?.status).toBe('awaiting_approval');
      await store.decide(id, { r1: { type: 'approve' } });
      await createWorker({ store, agents }).runUntilIdle();
      expect((await store.get(id))?.status).toBe('stopped');
      // Before the park: 3 and 5 messages (the second compaction drops the first note). After it, the
      // new worker's transcript is what that compaction kept, then the refund and its result: 5, not 7.
      expect(seen).toEqual([3, 5, 5]);
      expect((await store.get(id))?.transcript).toHaveLength(8);
    });

    it('many turns of one thread submitted at once, run by several workers, never run at once and run in order', async () => {
      const { agentName, thread } = fresh();
      const model = echoModel();
      const agents = { [agentName]: { model } };
      const ids = await Promise.all(
        Array.from({ length: 12 }, (_, i) => store.submit({ agent: agentName, input: `m${i}`, thread })),
      );
      const workers = [1, 2, 3].map(() => createWorker({ store, agents, concurrency: 4 }));
      await Promise.all(workers.map((w) => w.runUntilIdle()));
      expect(model.most).toBe(1);
      const stored = await store.get({ thread });
      const order = stored?.turns.map((t) => t.id) ?? [];
      expect([...order].sort()).toEqual([...ids].sort());
      // Each turn answered the message of its own place in line, after every earlier one.
      const said = (stored?.transcript ?? []).filter((m) => m.role === 'user').map((m) => (m.role === 'user' ? m.content : ''));
      const byId = new Map(await Promise.all(order.map(async (id) => [id, (await store.get(id))?.input] as const)));
      expect(said).toEqual(order.map((id) => byId.get(id)));
      expect(stored?.transcript).toHaveLength(24);
    });
  });
}

threadTests('PGlite', () => openStore('memory://'));

const schema = scratchSchema('thread_rules');
describe.skipIf(POSTGRES_URL === undefined)(
  `on Postgres${POSTGRES_URL === undefined ? ` (skipped: ${WHY_SKIPPED})` : ''}`,
  () => {
    threadTests(
      'Postgres',
      () => openStore(POSTGRES_URL as string, { schema }),
      () => dropSchema(schema),
    );
  },
);
