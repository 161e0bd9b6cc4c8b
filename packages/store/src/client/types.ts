// The client: what callers of a store use (an HTTP server over a store needs only this).

import type { ApprovalDecision } from '@turnkit/core';
import type {
  DecideResult,
  ListOptions,
  StoredThread,
  StoredTurn,
  SubmitOptions,
  ThreadPage,
  ThreadWatchEvent,
  TurnPage,
  WatchEvent,
  WatchOptions,
} from '../types.js';

/** The client side of a store: submit, read, decide, cancel and watch turns. */
export interface StoreClient {
  /** `pglite` or `postgres`. */
  readonly kind: 'pglite' | 'postgres';
  /**
   * Queues a turn for a worker with that agent; returns its id. With `thread`, the turn continues
   * that thread's conversation, after its earlier turns (throws ThreadClosedError for a closed
   * thread, ThreadBusyError with `whenBusy: 'refuse'` while another of its turns has not ended).
   */
  submit(options: SubmitOptions): Promise<string>;
  /** The turn, or null when there is none with that id. */
  get(id: string): Promise<StoredTurn | null>;
  /** The thread (its turns in order, its context, the parked calls of its current turn), or null when there is none. */
  get(ref: { readonly thread: string }): Promise<StoredThread | null>;
  /** Turns a page at a time (optionally only those of one status); pass the page's `cursor` back for the next. */
  list(options?: ListOptions): Promise<TurnPage>;
  /** Threads, by id, a page at a time. */
  listThreads(options?: Omit<ListOptions, 'status'>): Promise<ThreadPage>;
  /**
   * Closes a thread: it takes no more turns, its grants end, and its turns that have not ended are
   * cancelled (durable when it resolves). False when it was closed already; ThreadNotFoundError for an unknown id.
   */
  closeThread(thread: string, reason?: string): Promise<boolean>;
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
  /** What happens in a thread: each turn's events in order, with its id, until the thread is closed and its last turn ended. */
  watch(ref: { readonly thread: string }, options?: WatchOptions): AsyncIterable<ThreadWatchEvent>;
  /** Closes the store's connection (and PGlite's lock); the client is unusable afterwards. */
  close(): Promise<void>;
}
