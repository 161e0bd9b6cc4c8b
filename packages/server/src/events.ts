// Server-sent events from `store.watch`: the API streams the watch events as JSON, the console as
// rendered HTML. One loop for a turn's and a thread's events; it stops when the watch ends (the
// turn ended, or the thread is closed and its last turn ended) or the reader goes away.

import type { ThreadWatchEvent, WatchEvent } from '@turnkit/store';
import type { Context } from 'hono';
import { streamSSE, type SSEMessage } from 'hono/streaming';

/** How an event is written (no messages skips it). May look at the store (the console's panels). */
export type EventMessages<E = WatchEvent> = (event: E) => Promise<readonly SSEMessage[]> | readonly SSEMessage[];

/** A watch to stream: given the stream's abort signal, the events (`store.watch(…, { signal })`). */
export type Watch<E> = (signal: AbortSignal) => AsyncIterable<E>;

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
 * Streams a watch's events as SSE until the watch ends or the reader disconnects. `quiet`, when
 * given, is asked for messages whenever no event came for `pollMs`, and once before `end` (`last`).
 */
export function watchStream<E>(
  c: Context,
  watch: Watch<E>,
  messages: EventMessages<E>,
  pollMs: number,
  quiet?: (last: boolean) => Promise<readonly SSEMessage[]>,
): Response {
  return streamSSE(c, async (stream) => {
    const abort = new AbortController();
    stream.onAbort(() => abort.abort());
    try {
      const events = watch(abort.signal)[Symbol.asyncIterator]();
      let next = events.next();
      for (;;) {
        const result = quiet === undefined ? await next : await within(next, pollMs);
        if (result === null) {
          for (const message of await (quiet?.(false) ?? [])) await stream.writeSSE(message);
          continue;
        }
        if (result.done === true) break;
        next = events.next();
        for (const message of await messages(result.value)) await stream.writeSSE(message);
        if (abort.signal.aborted) break;
      }
      for (const message of await (quiet?.(true) ?? [])) await stream.writeSSE(message);
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

/** A thread's watch event with its place in the thread's watch (counted from 1): its SSE id. */
export interface PlacedEvent {
  readonly place: number;
  readonly event: ThreadWatchEvent;
}

/**
 * A thread's watch events numbered in the order the watch gives them (turn by turn, each turn's
 * log in order: the same every time, the log only grows), without the first `after`: a reader
 * resumes a thread's stream by the last place it read, as it resumes a turn's by its last seq.
 */
export async function* placed(events: AsyncIterable<ThreadWatchEvent>, after: number): AsyncGenerator<PlacedEvent> {
  let place = 0;
  for await (const event of events) {
    place += 1;
    if (place > after) yield { place, event };
  }
}

/** The API's form of a thread's watch event: `event: message|notice|status`, `id: place`, the event (with its `turnId`) as JSON. */
export function jsonThreadMessage({ place, event }: PlacedEvent): SSEMessage[] {
  return [{ event: event.type, id: String(place), data: JSON.stringify(event) }];
}
