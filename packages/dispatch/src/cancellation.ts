// A turn's cancellation without an eagerly made AbortSignal. On Node 20, creating an AbortSignal
// costs about 2 µs and aborting one about 1.5 µs (an Event is built and dispatched), more than
// the rest of a tool call. Most tools and models never look at their signal, so the signal is
// made the first time someone reads it, and the interpreter's own waits subscribe to a plain
// listener list instead of the EventTarget.

/** Whether a turn is cancelled, readable without creating an AbortSignal. */
export interface Cancellation {
  readonly aborted: boolean;
  readonly reason: unknown;
  /** The AbortSignal for code that needs one (made on first read, aborted with this cancellation). */
  readonly signal: AbortSignal;
  /** Calls `listener` once when cancelled (never when already cancelled); returns its removal. */
  onAbort(listener: () => void): () => void;
}

/** A cancellation whose AbortSignal is made only when read. Abort it with `abort(reason)`. */
export class LazyCancellation implements Cancellation {
  #aborted = false;
  #reason: unknown = undefined;
  #controller: AbortController | undefined;
  #listeners: (() => void)[] = [];

  /**
   * `controller`: a never-aborted AbortController to make the signal from if someone reads it (one
   * another cancellation gave up with `spare()`), so a process running many turns reuses it.
   */
  constructor(controller?: AbortController) {
    if (controller !== undefined && !controller.signal.aborted) this.#spare = controller;
  }
  #spare: AbortController | undefined;

  /**
   * True for a LazyCancellation made by this module (its private fields checked, so no look-alike
   * passes): the dispatcher can use it as its own instead of mirroring it.
   */
  static is(value: unknown): value is LazyCancellation {
    return value !== null && typeof value === 'object' && #aborted in value;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = this.#spare ?? new AbortController();
      this.#spare = undefined;
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  onAbort(listener: () => void): () => void {
    if (this.#aborted) return noop;
    this.#listeners.push(listener);
    return () => {
      const at = this.#listeners.indexOf(listener);
      if (at >= 0) this.#listeners.splice(at, 1);
    };
  }

  /**
   * The AbortController behind this cancellation's signal (or the one it was given and never
   * used) while this cancellation was never aborted, for another one to reuse once this one's
   * work is over and it will never be aborted. Whoever reuses it checks first that nobody listens
   * on its signal: then a reader sees a signal that never aborted, exactly as a new one.
   */
  spare(): AbortController | undefined {
    const controller = this.#controller ?? this.#spare;
    return this.#aborted || controller?.signal.aborted !== false ? undefined : controller;
  }

  /** Aborts once: first the AbortSignal (if anyone has it), then the listeners in order. */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    // As AbortController does: no reason means an AbortError.
    this.#reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
    this.#controller?.abort(this.#reason);
    const listeners = this.#listeners;
    this.#listeners = [];
    for (const listener of listeners) listener();
  }
}

function noop(): void {}

/** The cancellation of an AbortSignal (listeners go on the signal itself). */
export function signalCancellation(signal: AbortSignal): Cancellation {
  return {
    get aborted() {
      return signal.aborted;
    },
    get reason() {
      return signal.reason as unknown;
    },
    signal,
    onAbort(listener) {
      if (signal.aborted) return noop;
      signal.addEventListener('abort', listener, { once: true });
      return () => signal.removeEventListener('abort', listener);
    },
  };
}

/** A context's cancellation: its `cancellation` when it has a usable one, else its `signal`'s; undefined without either. */
export function cancellationOf(ctx: {
  readonly signal?: AbortSignal | undefined;
  readonly cancellation?: Cancellation | undefined;
}): Cancellation | undefined {
  const given = ctx.cancellation;
  if (given !== null && typeof given === 'object' && typeof given.onAbort === 'function') return given;
  return ctx.signal === undefined || ctx.signal === null ? undefined : signalCancellation(ctx.signal);
}
