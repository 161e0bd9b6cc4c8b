// The client: what callers of a store use (an HTTP server over a store needs only this).

import type { ApprovalDecision } from '@turnkit/core';
import type { DecideResult, ListOptions, StoredTurn, SubmitOptions, TurnPage, WatchEvent, WatchOptions } from '../types.js';

/** The client side of a store: submit, read, decide, cancel and watch turns. */
export interface StoreClient {
  /** `pglite` or `postgres`. */
  readonly kind: 'pglite' | 'postgres';
  /** Queues a turn for a worker with that agent; returns its id. */
  submit(options: SubmitOptions): Promise<string>;
  /** The turn, or null when there is none with that id. */
  get(id: string): Promise<StoredTurn | null>;
  list(options?: ListOptions): Promise<TurnPage>;
  /**
   * Decides parked calls; durable when it resolves. All or nothing: throws TurnNotFoundError,
   * TurnNotWaitingError, UnknownCallError (a call id the turn has not parked) or
   * CallAlreadyDecidedError (the first decision per call stands) and then stores none of them.
   */
  decide(id: string, decisions: Record<string, ApprovalDecision>): Promise<DecideResult>;
  /** Asks for the turn to be cancelled; durable when it resolves. False when the turn has already ended. */
  cancel(id: string, reason?: string): Promise<boolean>;
  /** What happens to the turn: its history, then new rows as they are written, until it ends. */
  watch(id: string, options?: WatchOptions): AsyncIterable<WatchEvent>;
  close(): Promise<void>;
}
