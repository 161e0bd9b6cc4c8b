// A StoreClient over the HTTP API of @turnkit/server: what the store commands use while `turnkit
// dev` holds a PGlite store (one process only), so `ls`, `show`, `approve`, `reject`, `cancel`,
// `watch` (a turn or a whole thread) and `run --store` work from another terminal. Every reply is checked before it is used.

import type { ApprovalDecision } from '@turnkit/core';
import type { StoreClient, StoredThread, StoredTurn, WatchEvent } from '@turnkit/store';

type DecideResult = Awaited<ReturnType<StoreClient['decide']>>;
type TurnPage = Awaited<ReturnType<StoreClient['list']>>;
type ThreadPage = Awaited<ReturnType<StoreClient['listThreads']>>;

/** A refusal of the server: its status, its error code (`not_found`, `already_decided`, …) and message. */
export class ServerRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ServerRefusal';
  }
}

/** An object with these keys, else an error naming what the server sent. */
function record(value: unknown, keys: readonly string[], what: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || keys.some((k) => !(k in value)))
    throw new Error(`the server sent ${what} without ${keys.join(', ')}; is it a turnkit server?`);
  return value as Record<string, unknown>;
}

/** A client for the server at `base` (http://host:port) with the bearer `token`. */
export function httpStore(base: string, token: string): StoreClient {
  const headers = { authorization: `Bearer ${token}`, accept: 'application/json' };

  async function call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(`${base}/api${path}`, {
        method,
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? String(error);
      throw new Error(`cannot reach turnkit dev at ${base} (${cause})`);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text) as unknown;
    } catch {
      throw new Error(`turnkit dev at ${base} answered ${response.status} with a body that is not JSON`);
    }
    if (!response.ok) {
      const error = (parsed as { error?: { code?: unknown; message?: unknown } } | null)?.error;
      throw new ServerRefusal(
        response.status,
        typeof error?.code === 'string' ? error.code : 'unknown',
        typeof error?.message === 'string' ? error.message : `turnkit dev at ${base} answered ${response.status}`,
      );
    }
    return parsed;
  }

  const turnPath = (id: string): string => `/turns/${encodeURIComponent(id)}`;
  const threadPath = (id: string): string => `/threads/${encodeURIComponent(id)}`;
  /** A GET whose 404 means "no such turn or thread". */
  async function found(path: string, keys: readonly string[], what: string): Promise<unknown> {
    try {
      return record(await call('GET', path), keys, what);
    } catch (error) {
      if (error instanceof ServerRefusal && error.status === 404) return null;
      throw error;
    }
  }

  return {
    kind: 'pglite',
    async submit(options) {
      const reply = record(await call('POST', '/turns', options), ['id'], 'a submitted turn');
      return String(reply.id);
    },
    get: ((ref: string | { readonly thread: string }) =>
      typeof ref === 'string'
        ? (found(turnPath(ref), ['id', 'status', 'transcript'], 'a turn') as Promise<StoredTurn | null>)
        : (found(
            threadPath(ref.thread),
            ['id', 'turns', 'transcript'],
            'a thread',
          ) as Promise<StoredThread | null>)) as StoreClient['get'],
    async list(options = {}) {
      const query = new URLSearchParams();
      if (options.status !== undefined) query.set('status', options.status);
      if (options.limit !== undefined) query.set('limit', String(options.limit));
      if (options.cursor !== undefined && options.cursor !== null) query.set('cursor', options.cursor);
      const reply = record(await call('GET', `/turns?${query}`), ['turns', 'cursor'], 'a page of turns');
      return reply as unknown as TurnPage;
    },
    async decide(id, decisions: Record<string, ApprovalDecision>) {
      const reply = record(await call('POST', `${turnPath(id)}/decisions`, { decisions }), ['accepted', 'ignored'], 'decisions');
      return reply as unknown as DecideResult;
    },
    async cancel(id, reason) {
      const reply = record(
        await call('POST', `${turnPath(id)}/cancel`, reason === undefined ? {} : { reason }),
        ['cancelled'],
        'a cancel',
      );
      return reply.cancelled === true;
    },
    async listThreads(options = {}) {
      const query = new URLSearchParams();
      if (options.limit !== undefined) query.set('limit', String(options.limit));
      if (options.cursor !== undefined && options.cursor !== null) query.set('cursor', options.cursor);
      const reply = record(await call('GET', `/threads?${query}`), ['threads', 'cursor'], 'a page of threads');
      return reply as unknown as ThreadPage;
    },
    async closeThread(thread, reason) {
      const reply = record(
        await call('POST', `${threadPath(thread)}/close`, reason === undefined ? {} : { reason }),
        ['closed'],
        'a close',
      );
      return reply.closed === true;
    },
    watch: ((ref: string | { readonly thread: string }, options: { after?: number; signal?: AbortSignal } = {}) => {
      if (typeof ref === 'string')
        return watchEvents(`${base}/api${turnPath(ref)}/events?after=${options.after ?? 0}`, headers, options.signal, 'turn');
      // As the store's: a thread's watch follows the whole thread.
      if (options.after !== undefined)
        throw new TypeError(
          'store.watch({ thread }) takes no `after`: it follows the whole thread (watch a turn by its id to start later).',
        );
      return watchEvents(`${base}/api${threadPath(ref.thread)}/events`, headers, options.signal, 'thread');
    }) as StoreClient['watch'],
    async close() {
      // Nothing is held between requests.
    },
  };
}

/** A turn's or a thread's server-sent events as watch events (a thread's with their `turnId`), until `end`. */
async function* watchEvents(
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal | undefined,
  what: 'turn' | 'thread',
): AsyncGenerator<WatchEvent> {
  const response = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' }, ...(signal ? { signal } : {}) });
  if (!response.ok || response.body === null)
    throw new ServerRefusal(response.status, 'watch', `turnkit dev answered ${response.status} to watching the ${what}`);
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data += line.slice(5).trim();
      }
      if (event === 'end') return;
      if (event === 'error') throw new Error(`turnkit dev stopped watching the ${what}: ${data}`);
      if (event === 'message' || event === 'notice' || event === 'status')
        yield record(
          JSON.parse(data) as unknown,
          what === 'turn' ? ['type', 'seq'] : ['type', 'seq', 'turnId'],
          'a watch event',
        ) as unknown as WatchEvent;
    }
  }
}
