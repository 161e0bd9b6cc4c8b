import type { Model } from '@turnkit/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoAgents } from '../examples/demo-agents.js';
import { readSse, startServer, type TestServer, waitForStatus } from './helpers.js';

let t: TestServer;
beforeAll(async () => {
  t = await startServer();
});
afterAll(async () => {
  await t.close();
});

const submit = async (input: string, extra: Record<string, unknown> = {}): Promise<string> => {
  const response = await t.api('/api/turns', { method: 'POST', body: JSON.stringify({ agent: 'support', input, ...extra }) });
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: string }).id;
};

describe('the HTTP API', () => {
  it('submits a turn, lists and gets it, streams its events, takes a decision and ends it', async () => {
    const id = await submit('Please refund order A-17 (49.90 EUR).');
    await waitForStatus(t.store, id, 'awaiting_approval');

    const turn = (await (await t.api(`/api/turns/${id}`)).json()) as { parked: { call: { id: string; input: unknown } }[] };
    expect(turn.parked.map((p) => p.call)).toEqual([
      { id: 'call_1', name: 'refund', input: { order: 'A-17', amount: 49.9, currency: 'EUR' } },
    ]);

    const waiting = (await (await t.api('/api/turns?status=awaiting_approval')).json()) as { turns: { id: string }[] };
    expect(waiting.turns.map((x) => x.id)).toContain(id);

    const decided = await t.api(`/api/turns/${id}/decisions`, {
      method: 'POST',
      body: JSON.stringify({ decisions: { call_1: { type: 'approve' } } }),
    });
    expect(await decided.json()).toEqual({ accepted: ['call_1'], ignored: [] });
    // The first decision wins: a second one is ignored, or refused once the turn has moved on.
    const again = await t.api(`/api/turns/${id}/decisions`, {
      method: 'POST',
      body: JSON.stringify({ decisions: { call_1: { type: 'reject' } } }),
    });
    expect([200, 409]).toContain(again.status);

    const events = await readSse(await t.api(`/api/turns/${id}/events`));
    expect(events.at(-1)?.event).toBe('end');
    const statuses = events.filter((e) => e.event === 'status').map((e) => JSON.parse(e.data).status);
    expect(statuses.at(-1)).toBe('stopped');
    expect(events.filter((e) => e.id !== undefined).map((e) => Number(e.id))).toEqual(
      events.filter((e) => e.id !== undefined).map((_, i) => i + 1),
    );
    const final = (await (await t.api(`/api/turns/${id}`)).json()) as { outcome: { output: string } };
    expect(final.outcome.output).toBe('Done: refunded 49.9 EUR for A-17.');
  });

  it("a turn of many agents: the child's parked call names its agents, is decided through the API, and the turn shows its child", async () => {
    const response = await t.api('/api/turns', {
      method: 'POST',
      body: JSON.stringify({ agent: 'desk', input: 'Please refund order T-3 (7 EUR).' }),
    });
    const { id } = (await response.json()) as { id: string };
    await waitForStatus(t.store, id, 'awaiting_approval');
    const parked = (await (await t.api(`/api/turns/${id}`)).json()) as {
      state: { status: string };
      parked: { call: { id: string; name: string }; agentPath?: string[] }[];
    };
    expect(parked.state.status).toBe('delegating');
    expect(parked.parked.map((p) => [p.call.id, p.call.name, p.agentPath])).toEqual([['call_1', 'refund', ['desk', 'support']]]);
    // The child's call_1, not the desk's transfer_task call_1.
    const decided = await t.api(`/api/turns/${id}/decisions`, {
      method: 'POST',
      body: JSON.stringify({ decisions: { call_1: { type: 'approve' } } }),
    });
    expect(await decided.json()).toEqual({ accepted: ['call_1'], ignored: [] });
    await waitForStatus(t.store, id, 'stopped');
    const done = (await (await t.api(`/api/turns/${id}`)).json()) as {
      outcome: { output: string };
      toolCalls: { callId: string; name: string; turn?: string }[];
      children: { id: string; agentPath: string[]; transcript: unknown[] }[];
      decisions: { callId: string; turn?: string }[];
    };
    expect(done.outcome.output).toBe('Support says: Done: refunded 7 EUR for T-3.');
    expect(done.toolCalls.map((c) => [c.callId, c.name, c.turn])).toEqual([
      ['call_1', 'transfer_task', undefined],
      ['call_1', 'refund', `${id}/call_1`],
    ]);
    expect(done.children.map((c) => [c.id, c.agentPath, c.transcript.length])).toEqual([
      [`${id}/call_1`, ['desk', 'support'], 4],
    ]);
    expect(done.decisions).toMatchObject([{ callId: 'call_1', turn: `${id}/call_1` }]);
    const events = await readSse(await t.api(`/api/turns/${id}/events`));
    const child = events
      .filter((e) => e.event === 'message')
      .map((e) => JSON.parse(e.data) as { child?: { agentPath: string[] } });
    expect(child.filter((e) => e.child !== undefined)).toHaveLength(4);
    expect(child.find((e) => e.child !== undefined)?.child?.agentPath).toEqual(['desk', 'support']);
  });

  it('resumes an event stream after a seq, from `after` or Last-Event-ID', async () => {
    const id = await submit('Where is my order B-2?');
    await waitForStatus(t.store, id, 'stopped');
    const all = await readSse(await t.api(`/api/turns/${id}/events`));
    const fromQuery = await readSse(await t.api(`/api/turns/${id}/events?after=3`));
    const fromHeader = await readSse(await t.api(`/api/turns/${id}/events`, { headers: { 'last-event-id': '3' } }));
    expect(fromQuery).toEqual(all.slice(3));
    expect(fromHeader).toEqual(all.slice(3));
  });

  it('rejects with a reason: the model sees the reason', async () => {
    const id = await submit('Refund order C-9, 120 EUR.');
    await waitForStatus(t.store, id, 'awaiting_approval');
    const response = await t.api(`/api/turns/${id}/decisions`, {
      method: 'POST',
      body: JSON.stringify({ decisions: { call_1: { type: 'reject', reason: 'C-9 was refunded last week' } } }),
    });
    expect(response.status).toBe(200);
    await waitForStatus(t.store, id, 'stopped');
    const turn = await t.store.get(id);
    const tool = turn?.transcript.find((m) => m.role === 'tool');
    expect(tool?.role === 'tool' && String(tool.result.output)).toContain('C-9 was refunded last week');
  });

  it('approve always sends the store an approve that remembers the tool', async () => {
    const id = await submit('Refund order D-1, 5 EUR.');
    await waitForStatus(t.store, id, 'awaiting_approval');
    const response = await t.api(`/api/turns/${id}/decisions`, {
      method: 'POST',
      body: JSON.stringify({ decisions: { call_1: { type: 'approve', remember: 'tool' } } }),
    });
    expect(await response.json()).toEqual({ accepted: ['call_1'], ignored: [] });
    await waitForStatus(t.store, id, 'stopped');
    const turn = await t.store.get(id);
    expect(turn?.decisions.map((d) => d.decision)).toEqual([{ type: 'approve', remember: 'tool' }]);
  });

  it('cancels a turn, and says false for one that has ended', async () => {
    const id = await submit('Refund order E-5, 10 EUR.');
    await waitForStatus(t.store, id, 'awaiting_approval');
    const cancel = (reason: string) => t.api(`/api/turns/${id}/cancel`, { method: 'POST', body: JSON.stringify({ reason }) });
    expect(await (await cancel('customer withdrew')).json()).toEqual({ cancelled: true });
    await waitForStatus(t.store, id, 'cancelled');
    expect((await t.store.get(id))?.outcome).toEqual({ status: 'cancelled', reason: 'customer withdrew' });
    expect(await (await cancel('again')).json()).toEqual({ cancelled: false });
  });

  it('pages through the list with the cursor', async () => {
    const ids = [
      await submit('Where is my order P-1?'),
      await submit('Where is my order P-2?'),
      await submit('Where is my order P-3?'),
    ];
    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page = (await (await t.api(`/api/turns?limit=2${cursor ? `&cursor=${cursor}` : ''}`)).json()) as {
        turns: { id: string }[];
        cursor: string | null;
      };
      expect(page.turns.length).toBeLessThanOrEqual(2);
      seen.push(...page.turns.map((x) => x.id));
      cursor = page.cursor;
    }
    expect(seen.filter((id) => ids.includes(id))).toEqual(ids);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('answers a bad body with a 400 naming the field', async () => {
    const post = async (path: string, body: string) => {
      const response = await t.api(path, { method: 'POST', body });
      return { status: response.status, body: (await response.json()) as { error: { field?: string; message: string } } };
    };
    const noAgent = await post('/api/turns', JSON.stringify({ input: 'hi' }));
    expect(noAgent.status).toBe(400);
    expect(noAgent.body.error.field).toBe('body.agent');
    expect(noAgent.body.error.message).toMatch(/^body\.agent: /);

    const extra = await post('/api/turns', JSON.stringify({ agent: 'support', inptu: 'typo' }));
    expect(extra.status).toBe(400);
    expect(extra.body.error.message).toContain('inptu');

    const badLimit = await post('/api/turns', JSON.stringify({ agent: 'support', limits: { maxIterations: -1 } }));
    expect(badLimit.status).toBe(400);
    expect(badLimit.body.error.message).toContain('maxIterations');

    const badDecision = await post('/api/turns/turn_x/decisions', JSON.stringify({ decisions: { call_1: { type: 'maybe' } } }));
    expect(badDecision.status).toBe(400);
    expect(badDecision.body.error.field).toBe('body.decisions.call_1.type');

    const none = await post('/api/turns/turn_x/decisions', JSON.stringify({ decisions: {} }));
    expect(none.status).toBe(400);
    expect(none.body.error.field).toBe('body.decisions');
    const badProto = await post('/api/turns/turn_x/decisions', '{"decisions":{"__proto__":{"type":"maybe"}}}');
    expect(badProto.status).toBe(400);
    expect(badProto.body.error.field).toBe('body.decisions.__proto__.type');

    const notJson = await post('/api/turns', '{not json');
    expect(notJson.status).toBe(400);
    const plain = await t.api('/api/turns', {
      method: 'POST',
      body: '{"agent":"support"}',
      headers: { 'content-type': 'text/plain' },
    });
    expect(plain.status).toBe(415);
    expect(((await plain.json()) as { error: { message: string } }).error.message).toBe(
      'The body\'s content-type is "text/plain", not JSON; send a JSON body with content-type application/json (see /api/openapi.json).',
    );

    const badQuery = await t.api('/api/turns?limit=0');
    expect(badQuery.status).toBe(400);
    expect(((await badQuery.json()) as { error: { field: string } }).error.field).toBe('query.limit');
  });

  it('answers unknown turns with 404 and decisions that do not fit with 409', async () => {
    expect((await t.api('/api/turns/turn_nope')).status).toBe(404);
    expect((await t.api('/api/turns/turn_nope/events')).status).toBe(404);
    const id = await submit('Where is my order Q-1?', { id: 'turn_fixed_id' });
    expect(id).toBe('turn_fixed_id');
    const dup = await t.api('/api/turns', { method: 'POST', body: JSON.stringify({ agent: 'support', id }) });
    expect(dup.status).toBe(409);
    await waitForStatus(t.store, id, 'stopped');
    const late = await t.api(`/api/turns/${id}/decisions`, {
      method: 'POST',
      body: JSON.stringify({ decisions: { call_1: { type: 'approve' } } }),
    });
    expect(late.status).toBe(409);
    expect(((await late.json()) as { error: { message: string } }).error.message).toContain('not waiting for approval');
  });
});

describe('call ids that are object keys', () => {
  it('decides a call whose id is __proto__ through the API', async () => {
    const refund = demoAgents.support?.tools?.find((tool) => tool.name === 'refund');
    const model: Model = {
      async generate(request) {
        return request.messages.at(-1)?.role === 'tool'
          ? { text: 'done', toolCalls: [] }
          : { text: '', toolCalls: [{ id: '__proto__', name: 'refund', input: { order: 'P-1', amount: 1, currency: 'EUR' } }] };
      },
    };
    const own = await startServer({ agents: { odd: { model, tools: refund ? [refund] : [] } } });
    try {
      const id = await own.store.submit({ agent: 'odd', input: 'refund' });
      await waitForStatus(own.store, id, 'awaiting_approval');
      // A raw body: JSON.parse keeps "__proto__" as an own key, and so must the server.
      const response = await own.api(`/api/turns/${id}/decisions`, {
        method: 'POST',
        body: '{"decisions":{"__proto__":{"type":"approve"}}}',
      });
      expect(await response.json()).toEqual({ accepted: ['__proto__'], ignored: [] });
      await waitForStatus(own.store, id, 'stopped');
    } finally {
      await own.close();
    }
  });
});
