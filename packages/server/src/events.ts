// Server-sent events from `store.watch`: the API streams the watch events as JSON, the console as
// rendered HTML. One loop for both; it stops when the turn ends or the reader goes away.

import type { StoreClient, WatchEvent } from '@turnkit/store';
import type { Context } from 'hono';
import { streamSSE, type SSEMessage } from 'hono/streaming';

/** How an event is written (no messages skips it). May look at the store (the console's panels). */
export type EventMessages = (event: WatchEvent) => Promise<readonly SSEMessage[]> | readonly SSEMessage[];

/** The `seq` to start after: the `after` query, else the browser's Last-Event-ID on reconnect. */
export function startAfter(c: Context, after: number | undefined): number {
  if (after !== undefined) return after;
  const last = Number(c.req.header('last-event-id'));
  return Number.isSafeInteger(last) && last >= 0 ? last : 0;
}

/** The promise's value, or null when it takes longer than `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * Streams the turn's watch events as SSE until the turn ends or the reader disconnects. `quiet`,
 * when given, is asked for messages whenever no event came for `pollMs`, and once before `end`.
 */
export function watchStream(
  c: Context,
  store: StoreClient,
  id: string,
  after: number,
  messages: EventMessages,
  pollMs: number,
  quiet?: () => Promise<readonly SSEMessage[]>,
): Response {
  return streamSSE(c, async (stream) => {
    const abort = new AbortController();
    stream.onAbort(() => abort.abort());
    try {
      const events = store.watch(id, { after, pollMs, signal: abort.signal })[Symbol.asyncIterator]();
      let next = events.next();
      for (;;) {
        const result = quiet === undefined ? await next : await within(next, pollMs);
        if (result === null) {
          for (const message of await (quiet?.() ?? [])) await stream.writeSSE(message);
          continue;
        }
        if (result.done === true) break;
        next = events.next();
        for (const message of await messages(result.value)) await stream.writeSSE(message);
        if (abort.signal.aborted) break;
      }
      for (const message of await (quiet?.() ?? [])) await stream.writeSSE(message);
      await stream.writeSSE({ event: 'end', data: '{}' });
    } catch (error) {
      if (!abort.signal.aborted) await stream.writeSSE({ event: 'error', data: JSON.stringify({ message: String(error) }) });
    }
  });
}

/** The API's form of a watch event: `event: message|notice|status`, `id: seq`, the event as JSON. */
export function jsonMessage(event: WatchEvent): SSEMessage[] {
  return [{ event: event.type, id: String(event.seq), data: JSON.stringify(event) }];
}
