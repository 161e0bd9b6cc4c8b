// The console over HTTP: what a parked call shows, what the live stream sends, and what a decision
// form answers.

import type { Model } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import { type AgentDefinition, createWorker } from '@turnkit/store';
import { createStore, openSql } from '@turnkit/store/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { demoAgents } from '../examples/demo-agents.js';
import { serve } from '../src/index.js';
import { consoleSession, readSse, startServer, type TestServer, TOKEN, waitForStatus } from './helpers.js';

const support = demoAgents.support as AgentDefinition;
/** The demo agent with a before-hook that caps refunds at 100 EUR: the input that runs differs from the model's. */
const capped: AgentDefinition = {
  ...support,
  hooks: {
    before: [
      {
        name: 'cap-refunds',
        run: (info) =>
          info.call.name === 'refund' && (info.input as { amount: number }).amount > 100
            ? { kind: 'rewrite', input: { ...(info.input as object), amount: 100 } }
            : undefined,
      },
    ],
  },
};

/** One reply with `n` calls of a tool that runs at once, then an answer. */
function manyCalls(n: number): AgentDefinition {
  const echo = defineTool({
    name: 'echo',
    description: 'Says its number back.',
    input: z.object({ n: z.number() }),
    readOnly: true,
    execute: ({ n: k }) => ({ echoed: k }),
  });
  const model: Model = {
    async generate(request) {
      if (request.messages.at(-1)?.role === 'tool') return { text: `all ${n} done`, toolCalls: [] };
      return { text: '', toolCalls: Array.from({ length: n }, (_, i) => ({ id: `call_${i}`, name: 'echo', input: { n: i } })) };
    },
  };
  return { model, tools: [echo], limits: { maxIterations: 2, budget: { maxToolCalls: 1000 } } };
}

let t: TestServer;
let session: { cookie: string; csrf: string };
beforeAll(async () => {
  t = await startServer({ agents: { support: capped, many100: manyCalls(100), many600: manyCalls(600) } });
  session = await consoleSession(t.url);
});
afterAll(async () => {
  await t.close();
});

const consoleGet = (path: string) => fetch(`${t.url}${path}`, { headers: { cookie: session.cookie } });
const decide = (id: string, form: Record<string, string>) =>
  fetch(`${t.url}/console/turns/${id}/decide`, {
    method: 'POST',
    body: new URLSearchParams({ csrf: session.csrf, ...form }),
    headers: { cookie: session.cookie, origin: t.url },
    redirect: 'manual',
  });
const pre = (page: string, label: string): unknown =>
  JSON.parse(
    (new RegExp(`<pre class="json" aria-label="${label}">([^<]*)</pre>`).exec(page)?.[1] ?? 'null').replace(/&quot;/g, '"'),
  );

describe('a parked call whose input a before-hook rewrote', () => {
  it('shows the input that runs, on the page and in the API (call keeps the model’s)', async () => {
    const id = await t.store.submit({ agent: 'support', input: 'Refund order C-9, 120 EUR.' });
    await waitForStatus(t.store, id, 'awaiting_approval');
    const turn = (await (await t.api(`/api/turns/${id}`)).json()) as { parked: { call: { input: unknown }; input: unknown }[] };
    expect(turn.parked[0]?.call.input).toEqual({ order: 'C-9', amount: 120, currency: 'EUR' });
    expect(turn.parked[0]?.input).toEqual({ order: 'C-9', amount: 100, currency: 'EUR' });
    const page = await (await consoleGet(`/console/turns/${id}`)).text();
    expect(page).toContain('This input will run:');
    expect(pre(page, 'input of call_1')).toEqual({ order: 'C-9', amount: 100, currency: 'EUR' });
    // Reject's second step shows it too.
    const step = await decide(id, { call: 'call_1', action: 'reject' });
    expect(pre(await step.text(), 'input of call_1')).toEqual({ order: 'C-9', amount: 100, currency: 'EUR' });
    // Approved, the input that ran is the capped one.
    expect((await decide(id, { call: 'call_1', action: 'approve' })).status).toBe(303);
    await waitForStatus(t.store, id, 'stopped');
    expect((await t.store.get(id))?.outcome).toMatchObject({ output: 'Done: refunded 100 EUR for C-9.' });
  });
});

describe('the turn page’s live stream', () => {
  /** Bytes the console's stream sends per log entry (an entry's own timeline and transcript items left out). */
  async function streamed(agent: string): Promise<{ entries: number; overhead: number; total: number }> {
    const id = await t.store.submit({ agent, input: 'go' });
    await waitForStatus(t.store, id, 'stopped');
    const events = await readSse(await consoleGet(`/console/turns/${id}/stream`));
    expect(events.at(-1)?.event).toBe('end');
    const perEntry = new Map<string, number>();
    let current = '';
    let total = 0;
    for (const e of events) {
      const bytes = Buffer.byteLength(e.data);
      total += bytes;
      if (e.event === 'timeline') {
        current = e.id ?? '';
        const entry = JSON.parse(e.data) as { timeline: string; transcript?: string };
        // What the entry itself is (one log entry's HTML) is not what the turn's length adds.
        perEntry.set(current, bytes - Buffer.byteLength(JSON.stringify(entry)));
      } else perEntry.set(current, (perEntry.get(current) ?? 0) + bytes);
    }
    return { entries: perEntry.size, overhead: Math.max(...perEntry.values()), total };
  }

  it('sends what changed: per entry, a bound that does not grow with the turn', async () => {
    const small = await streamed('many100');
    const large = await streamed('many600');
    expect(large.entries).toBeGreaterThan(600);
    // Beyond its own entry, an event carries at most the small panels (status, budget, cancel form).
    expect(small.overhead).toBeLessThan(8_000);
    expect(large.overhead).toBeLessThan(8_000);
    expect(large.overhead).toBeLessThan(small.overhead * 1.5 + 500);
    // The whole stream grows with the turn, not with its square (6 times the calls, about 6 times the bytes).
    expect(large.total / small.total).toBeLessThan(8);
  });
});

describe('decision forms answer what the store did', () => {
  it('asks for a reason before rejecting; a blank one is refused', async () => {
    const id = await t.store.submit({ agent: 'support', input: 'Refund order R-2, 20 EUR.' });
    await waitForStatus(t.store, id, 'awaiting_approval');
    const step = await decide(id, { call: 'call_1', action: 'reject' });
    expect(step.status).toBe(200);
    expect(await step.text()).toMatch(/<input id="reason" name="reason" required/);
    const blank = await decide(id, { call: 'call_1', action: 'reject', reason: '   ' });
    expect(blank.status).toBe(400);
    expect(await blank.text()).toContain('Write the reason the model reads');
    expect((await t.store.get(id))?.decisions).toEqual([]);
    const done = await decide(id, { call: 'call_1', action: 'reject', reason: 'R-2 is not ours' });
    expect(done.status).toBe(303);
    expect((await t.store.get(id))?.decisions.map((d) => d.decision)).toEqual([{ type: 'reject', reason: 'R-2 is not ours' }]);
  });

  it('shows a decision the store cannot read as an error, and the call as still waiting', async () => {
    const sql = await openSql('memory://');
    const store = createStore(sql);
    const worker = createWorker({ store, agents: demoAgents, pollMs: 20 });
    worker.start();
    const server = await serve({ store, token: TOKEN, pollMs: 30 });
    try {
      const id = await store.submit({ agent: 'support', input: 'Refund order M-1, 10 EUR.' });
      await waitForStatus(store, id, 'awaiting_approval');
      // A decision row no store.decide writes (another writer's), which a worker reads and does not apply.
      await sql.query(
        `INSERT INTO turnkit_inbox (turn_id, kind, call_id, body) VALUES ($1, 'decision', 'call_1', '{"type":"maybe"}'::jsonb)`,
        [id],
      );
      const turn = await store.get(id);
      expect(turn?.status).toBe('awaiting_approval');
      expect(turn?.parked.map((p) => p.call.id)).toEqual(['call_1']);
      const own = await consoleSession(server.url);
      const page = await (await fetch(`${server.url}/console/turns/${id}`, { headers: { cookie: own.cookie } })).text();
      expect(page).not.toMatch(/<code>call_1<\/code> rejected/);
      expect(page).toContain('this decision cannot be read, so it was not applied; the call still waits');
      expect(page).toContain(`data-call="call_1"`);
      // Approving now: the store ignores it (the call has a decision row), and the page says so.
      const approve = await fetch(`${server.url}/console/turns/${id}/decide`, {
        method: 'POST',
        body: new URLSearchParams({ csrf: own.csrf, call: 'call_1', action: 'approve' }),
        headers: { cookie: own.cookie, origin: server.url },
        redirect: 'manual',
      });
      expect(approve.status).toBe(409);
      expect(await approve.text()).toContain(
        'already has a decision in the store, so this one was not taken; the call still waits',
      );
    } finally {
      await server.close();
      await worker.stop();
      await store.close();
    }
  });
});
