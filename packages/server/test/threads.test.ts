// Threads over HTTP: the API lists a thread, reads it with its turns in order and the calls its
// current turn parked, refuses a busy or closed thread's turn, streams its events, and closes it;
// the console lists threads and shows a thread's page, live.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleSession, readSse, startServer, type TestServer, waitForStatus } from './helpers.js';

let t: TestServer;
let session: { cookie: string; csrf: string };
beforeAll(async () => {
  t = await startServer();
  session = await consoleSession(t.url);
});
afterAll(async () => {
  await t.close();
});

const post = (body: unknown): RequestInit => ({ method: 'POST', body: JSON.stringify(body) });
const consoleGet = (path: string) => fetch(`${t.url}${path}`, { headers: { cookie: session.cookie } });

describe('threads over HTTP', () => {
  it('a thread of two turns: the first parked, the second waiting behind it, then closed', async () => {
    const first = (await (
      await t.api('/api/turns', post({ agent: 'support', input: 'Refund order T-1, 3 EUR.', thread: 'chat-1' }))
    ).json()) as {
      id: string;
    };
    await waitForStatus(t.store, first.id, 'awaiting_approval');
    const second = (await (await t.api('/api/turns', post({ agent: 'support', input: 'Thanks.', thread: 'chat-1' }))).json()) as {
      id: string;
    };
    const refused = await t.api('/api/turns', post({ agent: 'support', input: 'Hello?', thread: 'chat-1', whenBusy: 'refuse' }));
    expect(refused.status).toBe(409);
    expect(await refused.json()).toEqual({
      error: {
        code: 'thread_busy',
        message: expect.stringMatching(/^Thread 'chat-1' is busy: its turn '.+' has not ended \(status awaiting_approval\)/),
        field: 'body.thread',
      },
    });

    const thread = (await (await t.api('/api/threads/chat-1')).json()) as {
      turns: { id: string; status: string; thread: string }[];
      current: string;
      parked: { call: { name: string } }[];
      status: string;
    };
    expect(thread.turns.map((turn) => [turn.id, turn.status, turn.thread])).toEqual([
      [first.id, 'awaiting_approval', 'chat-1'],
      [second.id, 'ready', 'chat-1'],
    ]);
    expect(thread.current).toBe(first.id);
    expect(thread.parked.map((p) => p.call.name)).toEqual(['refund']);
    const listed = (await (await t.api('/api/threads')).json()) as { threads: { id: string; turns: number }[] };
    expect(listed.threads).toContainEqual(expect.objectContaining({ id: 'chat-1', turns: 2, current: first.id }));
    const turns = (await (await t.api('/api/turns')).json()) as { turns: { id: string; thread: string | null }[] };
    expect(turns.turns.find((turn) => turn.id === second.id)?.thread).toBe('chat-1');

    // The console: the threads' list, and the thread's page with its turns and the parked call.
    const list = await (await consoleGet('/console/threads')).text();
    expect(list).toContain('href="/console/threads/chat-1"');
    const page = await (await consoleGet('/console/threads/chat-1')).text();
    expect(page).toContain('<h1>Thread chat-1</h1>');
    expect(page.indexOf(first.id)).toBeLessThan(page.indexOf(second.id));
    expect(page).toContain('<span class="tool">refund</span>');
    expect(page).toContain(`href="/console/turns/${first.id}">Decide on turn ${first.id}`);
    expect((await consoleGet('/console/threads/nope')).status).toBe(404);
    // The list of turns links each turn to its thread.
    expect(await (await consoleGet('/console')).text()).toContain('thread <a href="/console/threads/chat-1">chat-1</a>');

    expect(await (await t.api('/api/threads/chat-1/close', post({ reason: 'resolved' }))).json()).toEqual({ closed: true });
    await waitForStatus(t.store, first.id, 'cancelled');
    await waitForStatus(t.store, second.id, 'cancelled');
    const closed = (await (await t.api('/api/threads/chat-1')).json()) as { status: string; closeReason: string };
    expect(closed).toMatchObject({ status: 'closed', closeReason: 'resolved' });
    const more = await t.api('/api/turns', post({ agent: 'support', input: 'More?', thread: 'chat-1' }));
    expect(more.status).toBe(409);
    expect(((await more.json()) as { error: { code: string } }).error.code).toBe('thread_closed');
    expect((await t.api('/api/threads/nope')).status).toBe(404);
  });

  it("streams a thread's events: every turn in order, numbered, resumable, until it is closed; the console's page follows it", async () => {
    const turns = [
      await t.store.submit({ agent: 'support', input: 'Where is my order S-1?', thread: 'live-1' }),
      await t.store.submit({ agent: 'support', input: 'And order S-2?', thread: 'live-1' }),
    ];
    // The console's stream, opened while the thread runs: it ends once the thread is closed and its turns ended.
    const page = consoleGet('/console/threads/live-1/stream');
    await waitForStatus(t.store, turns[0] as string, 'stopped');
    await waitForStatus(t.store, turns[1] as string, 'stopped');
    expect(await (await t.api('/api/threads/live-1/close', post({ reason: 'done' }))).json()).toEqual({ closed: true });

    const all = await readSse(await t.api('/api/threads/live-1/events'));
    expect(all.at(-1)?.event).toBe('end');
    const events = all
      .slice(0, -1)
      .map((e) => ({ ...e, data: JSON.parse(e.data) as { turnId: string; type: string; status?: string } }));
    expect(events.map((e) => Number(e.id))).toEqual(events.map((_, i) => i + 1));
    expect(events.every((e) => e.event === e.data.type)).toBe(true);
    // Each turn's events, the first turn's before the second's, each ending with its status stopped.
    const ids = events.map((e) => e.data.turnId);
    expect([...new Set(ids)]).toEqual(turns);
    expect(ids.lastIndexOf(turns[0] as string)).toBeLessThan(ids.indexOf(turns[1] as string));
    const ends = events.filter((e) => e.data.type === 'status' && e.data.status === 'stopped').map((e) => e.data.turnId);
    expect(ends).toEqual(turns);
    // Resumed after a place, from `after` or Last-Event-ID: the rest, the same.
    expect(await readSse(await t.api('/api/threads/live-1/events?after=3'))).toEqual(all.slice(3));
    expect(await readSse(await t.api('/api/threads/live-1/events', { headers: { 'last-event-id': '3' } }))).toEqual(all.slice(3));
    expect((await t.api('/api/threads/thread_none/events')).status).toBe(404);

    // The console's stream sent the panels as they changed; its last ones show both turns stopped and the thread closed.
    const shown = (await readSse(await page))
      .filter((e) => e.event === 'panels')
      .map((e) => JSON.parse(e.data) as Record<string, string>);
    const last = (name: string) => shown.filter((p) => p[name] !== undefined).at(-1)?.[name] ?? '';
    expect(last('summary')).toContain('closed: <q>done</q>');
    expect(last('turns').match(/data-turn="[^"]+"/g)).toEqual(turns.map((id) => `data-turn="${id}"`));
    expect(last('turns').match(/data-status="stopped"/g)).toHaveLength(2);
    expect(last('transcript')).toContain('S-2');
    expect((await consoleGet('/console/threads/nope/stream')).status).toBe(404);
  });
});
