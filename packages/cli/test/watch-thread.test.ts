// `turnkit watch --thread` through `turnkit dev`, in one process: a server over a memory store (as
// `turnkit dev` serves its PGlite store), its link file in a directory, and the command run by
// `main` on that directory. The HTTP client gives the thread's events exactly as the store does.

import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelRequest } from '@turnkit/core';
import { serve } from '@turnkit/server';
import { createWorker, openStore, type ThreadWatchEvent } from '@turnkit/store';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { writeDevLink } from '../src/dev-link.js';
import { httpStore } from '../src/http-store.js';
import { main } from '../src/program.js';

const TOKEN = 'watch-thread-token-abcdefghijklmnopqrstuvwxyz';
const echo = {
  model: {
    async generate(request: ModelRequest) {
      const said = request.messages.filter((m) => m.role === 'user').at(-1);
      return { text: `heard: ${said?.role === 'user' ? said.content : ''}`, toolCalls: [] };
    },
  },
};

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  vi.restoreAllMocks();
});

const drain = async <T>(events: AsyncIterable<T>): Promise<T[]> => {
  const all: T[] = [];
  for await (const event of events) all.push(event);
  return all;
};

describe('watching a whole thread through turnkit dev', () => {
  it('the HTTP client gives the store’s thread events; `turnkit watch --thread` prints each turn in order', async () => {
    const store = await openStore('memory://');
    const worker = createWorker({ store, agents: { echo }, pollMs: 10 });
    worker.start();
    const server = await serve({ store, token: TOKEN, pollMs: 20 });
    cleanups.push(
      () => store.close(),
      () => worker.stop(),
      () => server.close(),
    );
    const dir = await mkdtemp(join(tmpdir(), 'turnkit-watch-thread-'));
    // The link names a running process other than this one (a link of this process's own is ignored): vitest's.
    cleanups.push(writeDevLink(dir, { url: server.url, token: TOKEN, pid: process.ppid, agents: ['echo'] }));

    const first = await store.submit({ agent: 'echo', input: 'one', thread: 'talk' });
    const second = await store.submit({ agent: 'echo', input: 'two', thread: 'talk' });
    const client = httpStore(server.url, TOKEN);
    // Followed while the turns run, ended by the close.
    const following = drain(client.watch({ thread: 'talk' }));
    for (;;) {
      const thread = await store.get({ thread: 'talk' });
      if (thread?.current === null) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await store.closeThread('talk', 'done');
    const overHttp = await following;
    const direct = await drain(store.watch({ thread: 'talk' }, { pollMs: 10 }));
    expect(overHttp).toEqual(direct);
    expect([...new Set(direct.map((e: ThreadWatchEvent) => e.turnId))]).toEqual([first, second]);
    expect(() => client.watch({ thread: 'talk' }, { after: 2 })).toThrow(/takes no `after`/);

    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const code = await main(['node', 'turnkit', 'watch', '--thread', 'talk', '--store', dir]);
    vi.mocked(process.stdout.write).mockRestore();
    const lines = written.join('').trimEnd().split('\n');
    expect(code, written.join('')).toBe(0);
    expect(lines[0]).toBe(`── turn ${first}`);
    expect(lines).toContain(`── turn ${second}`);
    expect(lines.indexOf(`── turn ${second}`)).toBeGreaterThan(lines.indexOf('  assistant: heard: one'));
    expect(lines).toContain('  assistant: heard: two');
    expect(lines.at(-1)).toBe('→ thread talk is closed');
  });
});
