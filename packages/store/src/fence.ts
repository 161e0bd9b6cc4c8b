// A worker's hold on one turn, as its running work sees it: the lease, the cancellation that
// stops the turn's model and tool calls, and the error that says the turn was lost to another
// writer. Every write that finds the lease lost (LeaseLostError, ConflictError) trips it.

import { LazyCancellation } from '@turnkit/dispatch';
import { isFencedOut } from './errors.js';
import type { Store } from './store.js';
import type { Lease } from './types.js';

export type Report = (error: unknown, turnId: string | null) => void;

export class Fence {
  readonly cancellation = new LazyCancellation();
  /** Set once a write found the turn held by someone else. */
  lost: Error | null = null;

  constructor(
    readonly store: Store,
    readonly lease: Lease,
    readonly report: Report,
  ) {}

  /** Stops the turn's work in this worker: the turn belongs to another writer now. */
  lose(error: Error): void {
    if (this.lost === null) this.lost = error;
    this.cancellation.abort('this worker lost the turn to another worker');
  }

  /** Trips the fence for a fenced-out error; true when it was one. */
  caught(error: unknown): boolean {
    if (!isFencedOut(error)) return false;
    this.lose(error);
    return true;
  }

  /** Throws the error that lost the turn, if one did. */
  check(): void {
    if (this.lost !== null) throw this.lost;
  }

  /** Runs a write; a fenced-out error trips the fence and is rethrown. */
  async write<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      this.caught(error);
      throw error;
    }
  }
}
