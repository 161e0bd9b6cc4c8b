// A single-slot handoff between the turn's driver (the producer) and the reader (the consumer).
// The producer waits after each value until the reader has taken it, so a slow reader slows the
// model stream down and nothing piles up: at most one value waits. Once the turn is being
// cancelled (`release`), the producer stops waiting; the few values the cancellation still
// produces (synthesised results, `done`) queue up for a reader that is still there.

/** The producer's side of a handoff. */
export interface EventSink<T> {
  /**
   * Hands one value over. Returns undefined when the producer need not wait (a reader was already
   * waiting, the turn is being cancelled, or the reader left and the value was dropped), else a
   * promise that resolves when the value is taken.
   */
  send(value: T): Promise<void> | undefined;
}

interface Slot<T> {
  readonly value: T;
  taken: (() => void) | undefined;
}

export class Handoff<T> implements EventSink<T> {
  // Holds at most one value until `release`; then a handful (see the header).
  private readonly queue: Slot<T>[] = [];
  private reader:
    | { readonly resolve: (result: IteratorResult<T, undefined>) => void; readonly reject: (error: unknown) => void }
    | undefined;
  private ended: { readonly error: unknown; readonly failed: boolean } | undefined;
  private released = false;
  private left = false;
  /** True once the reader took a value `isLast` recognises. */
  lastTaken = false;

  constructor(private readonly isLast: (value: T) => boolean = () => false) {}

  send(value: T): Promise<void> | undefined {
    if (this.left || this.ended !== undefined) return undefined;
    const reader = this.reader;
    if (reader !== undefined) {
      this.reader = undefined;
      if (this.isLast(value)) this.lastTaken = true;
      reader.resolve({ done: false, value });
      return undefined;
    }
    if (this.released) {
      this.queue.push({ value, taken: undefined });
      return undefined;
    }
    return new Promise<void>((taken) => {
      this.queue.push({ value, taken });
    });
  }

  /** The producer is done; with `failed`, the reader's next take rejects with `error`. */
  end(error?: unknown, failed = false): void {
    if (this.ended !== undefined) return;
    this.ended = { error, failed };
    const reader = this.reader;
    this.reader = undefined;
    if (reader === undefined) return;
    if (failed) reader.reject(error);
    else reader.resolve({ done: true, value: undefined });
  }

  /** The producer stops waiting for the reader from now on (the turn is being cancelled). */
  release(): void {
    this.released = true;
    for (const slot of this.queue) {
      const taken = slot.taken;
      slot.taken = undefined;
      taken?.();
    }
  }

  /** The reader takes the next value, waiting for one if none is there. */
  take(): Promise<IteratorResult<T, undefined>> {
    const slot = this.queue.shift();
    if (slot !== undefined) {
      if (this.isLast(slot.value)) this.lastTaken = true;
      slot.taken?.();
      return Promise.resolve({ done: false, value: slot.value });
    }
    if (this.ended !== undefined)
      return this.ended.failed ? Promise.reject(this.ended.error) : Promise.resolve({ done: true, value: undefined });
    if (this.left) return Promise.resolve({ done: true, value: undefined });
    if (this.reader !== undefined)
      return Promise.reject(
        new Error('The turn stream is already waiting for an event: await each next() before calling it again.'),
      );
    return new Promise((resolve, reject) => {
      this.reader = { resolve, reject };
    });
  }

  /** The reader left: waiting values are dropped and the producer no longer waits. */
  leave(): void {
    this.left = true;
    this.release();
    this.queue.length = 0;
    const reader = this.reader;
    this.reader = undefined;
    reader?.resolve({ done: true, value: undefined });
  }
}
