// A real server on 127.0.0.1 over an in-memory store, with a worker running the demo agents. With
// TURNKIT_TEST_DBOS_URL (a Postgres database), over turns on DBOS instead (@turnkit/dbos), this
// process running them: the console's tests run unchanged against the same client API.

import { definedProps } from '@turnkit/core/internal';
import { type AgentDefinition, createWorker, openStore, type StoreClient } from '@turnkit/store';
import { demoAgents } from '../examples/demo-agents.js';
import { type RunningServer, serve } from '../src/index.js';

export const TOKEN = 'test-token-abcdefghijklmnopqrstuvwxyz-0123';

export interface TestServer {
  readonly url: string;
  readonly store: StoreClient;
  readonly server: RunningServer;
  /** fetch on the API with the token (init.headers win). */
  api(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

export async function startServer(
  options: { readonly maxBodyBytes?: number; readonly agents?: Record<string, AgentDefinition> } = {},
): Promise<TestServer> {
  const agents = options.agents ?? demoAgents;
  const dbosUrl = process.env.TURNKIT_TEST_DBOS_URL || undefined;
  let store: StoreClient;
  let stopWorker: () => Promise<void>;
  if (dbosUrl === undefined) {
    const stored = await openStore('memory://');
    const worker = createWorker({ store: stored, agents, pollMs: 20 });
    worker.start();
    store = stored;
    stopWorker = () => worker.stop();
  } else {
    const { createDbosTurns } = await import('@turnkit/dbos');
    store = await createDbosTurns({ databaseUrl: dbosUrl, agents, cancelPollMs: 50 });
    stopWorker = async () => undefined;
  }
  const server = await serve({
    store,
    token: TOKEN,
    pollMs: 30,
    ...definedProps({ maxBodyBytes: options.maxBodyBytes }),
  });
  return {
    url: server.url,
    store,
    server,
    api: (path, init = {}) =>
      fetch(`${server.url}${path}`, {
        ...init,
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          ...(init.headers as Record<string, string>),
        },
      }),
    async close() {
      await server.close();
      await stopWorker();
      await store.close();
    },
  };
}

/** Waits until the turn has `status` (polls the store; bounded by vitest's timeout). */
export async function waitForStatus(store: StoreClient, id: string, status: string): Promise<void> {
  for (;;) {
    const turn = await store.get(id);
    if (turn?.status === status) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export interface SseEvent {
  readonly event: string;
  readonly id: string | undefined;
  readonly data: string;
}

/** Reads a server-sent event stream to its end. */
export async function readSse(response: Response): Promise<SseEvent[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const fields = new Map<string, string>();
      for (const line of block.split('\n')) {
        const at = line.indexOf(': ');
        if (at > 0) fields.set(line.slice(0, at), line.slice(at + 2));
      }
      return { event: fields.get('event') ?? 'message', id: fields.get('id'), data: fields.get('data') ?? '' };
    });
}

/** Signs in to the console as a browser would; returns the session cookie and its CSRF token. */
export async function consoleSession(url: string): Promise<{ cookie: string; csrf: string }> {
  const login = await fetch(`${url}/console/login`, {
    method: 'POST',
    body: new URLSearchParams({ token: TOKEN }),
    headers: { origin: url },
    redirect: 'manual',
  });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const page = await (await fetch(`${url}/console`, { headers: { cookie } })).text();
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '' };
}
