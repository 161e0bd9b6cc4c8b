// The object a streamed turn returns: an async iterable of events, the final result, and web
// stream / SSE views of the same events. It holds no turn logic: `run` (the shared driver with
// streaming handlers) produces the events into a single-slot handoff; this file only decides when
// the run starts, who reads, and what cancels it.
import { errorMessage } from '@turnkit/core/internal';
import type { TurnStreamEvent } from './events.js';
import { type EventSink, Handoff } from './handoff.js';

/** Runs the turn, sending events to `sink`; `signal` aborts when the reader leaves or the caller's signal fires. */
export type StreamRun<R> = (sink: EventSink<TurnStreamEvent>, signal: AbortSignal) => Promise<R>;

/** Response headers for a server-sent event stream (no caching, no proxy buffering). */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

const READER_LEFT = 'The reader stopped reading the turn stream before the turn ended.';

/**
 * A turn in progress, read as events. Read it once: with `for await`, `toReadableStream()`,
 * `toSSE()` or `toResponse()`. The turn runs as it is read (a slow reader slows the model down);
 * stopping early cancels it. If nobody reads, awaiting `result` runs the turn to its end and
 * drops the events.
 */
export class TurnStream<R> implements AsyncIterable<TurnStreamEvent> {
  /** The turn's result; resolves `cancelled` when the reader stops early or the signal aborts. */
  readonly result: Promise<R>;

  readonly #run: StreamRun<R>;
  readonly #handoff: Handoff<TurnStreamEvent>;
  readonly #controller = new AbortController();
  readonly #signal: AbortSignal;
  #started = false;
  #reader: 'none' | 'reading' | 'draining' = 'none';
  #settle: { resolve: (value: R) => void; reject: (error: unknown) => void } | undefined;

  /**
   * `isLast` recognises the turn's last event (default: `done`); a reader that leaves after it
   * does not cancel the turn.
   */
  constructor(
    run: StreamRun<R>,
    options: { readonly signal?: AbortSignal | undefined; readonly isLast?: (event: TurnStreamEvent) => boolean } = {},
  ) {
    this.#run = run;
    this.#handoff = new Handoff<TurnStreamEvent>(options.isLast ?? ((event) => event.type === 'done'));
    this.#signal =
      options.signal === undefined ? this.#controller.signal : AbortSignal.any([options.signal, this.#controller.signal]);
    // A cancelled turn must finish even if its reader is slow or gone, so the driver stops waiting.
    if (this.#signal.aborted) this.#handoff.release();
    else this.#signal.addEventListener('abort', () => this.#handoff.release(), { once: true });
    const result = new ResultPromise<R>((resolve, reject) => {
      this.#settle = { resolve, reject };
    });
    result.onObserved(() => this.#resultAwaited());
    // The reader sees a failure too; an unobserved rejection must not crash the process.
    Promise.prototype.then.call(result, undefined, () => undefined);
    this.result = result;
  }

  /**
   * Reads the events with `for await`; one reader only (a second `for await`, `toReadableStream` or `toSSE` throws).
   * Leaving the loop early cancels the turn, unless it was after the last event.
   */
  [Symbol.asyncIterator](): AsyncIterator<TurnStreamEvent, undefined> {
    this.#claim('reading');
    const handoff = this.#handoff;
    const stop = async (): Promise<IteratorResult<TurnStreamEvent, undefined>> => {
      this.#readerLeft();
      return { done: true, value: undefined };
    };
    return {
      next: () => {
        this.#start();
        return handoff.take();
      },
      return: stop,
      throw: stop,
    };
  }

  /** The events as a web ReadableStream; cancelling it cancels the turn. */
  toReadableStream(): ReadableStream<TurnStreamEvent> {
    const events = this[Symbol.asyncIterator]();
    return new ReadableStream<TurnStreamEvent>(
      {
        async pull(controller) {
          try {
            const next = await events.next();
            if (next.done === true) controller.close();
            else controller.enqueue(next.value);
          } catch (error) {
            // The reader is gone with the error: the turn must settle all the same.
            await events.return?.();
            throw error;
          }
        },
        async cancel() {
          await events.return?.();
        },
      },
      // Pull only when the consumer reads: no read-ahead.
      { highWaterMark: 0 },
    );
  }

  /**
   * The events as a `text/event-stream` body: `event: <type>` and `data: <event JSON>` per event.
   * If the turn throws, a last `error` event carries its message. Cancelling the body cancels the turn.
   *
   * @example
   * return new Response(stream.toSSE(), { headers: SSE_HEADERS });
   */
  toSSE(): ReadableStream<Uint8Array> {
    const events = this[Symbol.asyncIterator]();
    const encoder = new TextEncoder();
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          try {
            const next = await events.next();
            if (next.done === true) controller.close();
            else controller.enqueue(encoder.encode(formatSSE(next.value.type, next.value)));
          } catch (error) {
            const message = errorMessage(error);
            controller.enqueue(encoder.encode(formatSSE('error', { type: 'error', message })));
            controller.close();
            // This reader is gone now: the turn must settle (cancelled, unless it already ended).
            await events.return?.();
          }
        },
        async cancel() {
          await events.return?.();
        },
      },
      { highWaterMark: 0 },
    );
  }

  /** A web Response streaming `toSSE()` with the SSE headers; `init` adds status and headers. */
  toResponse(init: ResponseInit = {}): Response {
    const headers = new Headers(init.headers);
    for (const [name, value] of Object.entries(SSE_HEADERS)) if (!headers.has(name)) headers.set(name, value);
    return new Response(this.toSSE(), { ...init, headers });
  }

  #claim(reader: 'reading' | 'draining'): void {
    if (this.#reader === 'draining') {
      throw new TypeError(
        'This turn stream was already drained because `result` was awaited while nobody read it; start reading the stream before awaiting `result`.',
      );
    }
    if (this.#reader === 'reading') {
      throw new TypeError(
        'This turn stream is already being read; a TurnStream can be read once (by for await, toReadableStream(), toSSE() or toResponse()).',
      );
    }
    this.#reader = reader;
  }

  #start(): void {
    if (this.#started) return;
    this.#started = true;
    const settle = this.#settle;
    const handoff = this.#handoff;
    const run = async (): Promise<R> => this.#run(handoff, this.#signal);
    run().then(
      (value) => {
        handoff.end();
        settle?.resolve(value);
      },
      (error: unknown) => {
        handoff.end(error, true);
        settle?.reject(error);
      },
    );
  }

  #readerLeft(): void {
    // Leaving after the last event (`done`) is the normal end of a loop that breaks on it.
    if (!this.#handoff.lastTaken) this.#controller.abort(new Error(READER_LEFT));
    this.#handoff.leave();
    // A reader that leaves before its first read still gets a result: the turn runs and cancels.
    this.#start();
  }

  #resultAwaited(): void {
    // Give code that awaits `result` first and reads right after (same tick) the chance to read.
    setTimeout(() => {
      if (this.#reader !== 'none') return;
      this.#claim('draining');
      this.#handoff.leave();
      this.#start();
    }, 0);
  }
}

/** One server-sent event. JSON has no raw newlines, so `data` is always one line. */
export function formatSSE(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * The result promise. It is a real Promise; it only notices the first `then` (what `await` calls)
 * so that awaiting the result of a stream nobody reads can run the turn instead of hanging.
 */
class ResultPromise<T> extends Promise<T> {
  // Derived promises (from then/catch/finally) are plain ones.
  static override get [Symbol.species](): PromiseConstructor {
    return Promise;
  }

  #observed: (() => void) | undefined;

  onObserved(callback: () => void): void {
    this.#observed = callback;
  }

  // biome-ignore lint/suspicious/noThenProperty: a turn stream is awaited for its result, by design
  override then<A = T, B = never>(
    onFulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    const observed = this.#observed;
    this.#observed = undefined;
    observed?.();
    return super.then(onFulfilled, onRejected);
  }
}
