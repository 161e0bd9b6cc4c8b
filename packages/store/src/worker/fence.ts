// A worker's hold on one turn, as its running work sees it: the lease, the cancellation that
// stops the turn's model and tool calls, and the reason this worker stopped working on the turn.
// The hold's decisions are the protocol's (protocol.ts): `decide` feeds it an event and
// returns the effects to perform. Every database call of a running turn goes through `write`: one
// that fails trips the fence, whether the lease was lost (LeaseLostError, ConflictError) or the
// database could not be reached (the write may or may not have committed, so the turn is
// recovered from what is stored).

import { isFencedOut, messageOf } from '../errors.js';
import { openHold, protocolStep, type Hold, type LostReason, type ProtocolEffect, type ProtocolEvent } from './protocol.js';
import type { Commit, Lease } from '../types.js';
import type { Leases } from './types.js';

export type Report = (error: unknown, turnId: string | null) => void;

/** The worker is stopping and its drain deadline passed: the turn goes back to the database for another worker. */
export class HandedBack extends Error {
  constructor(readonly turnId: string) {
    super(`Turn '${turnId}' was handed back: its worker is stopping and the drain deadline passed.`);
    this.name = 'HandedBack';
  }
}

/** A model call is to be retried after a wait: the turn waits in the database, not in this worker. */
export class RetryParked extends Error {
  constructor(
    readonly turnId: string,
    readonly delayMs: number,
  ) {
    super(`Turn '${turnId}' waits ${delayMs} ms in the database before its model call is retried.`);
    this.name = 'RetryParked';
  }
}

/** A database call of a running turn failed (not a lost lease): the turn is left to be recovered from what is stored. */
export class DatabaseFault extends Error {
  constructor(
    readonly turnId: string,
    override readonly cause: unknown,
  ) {
    super(`Turn '${turnId}' stopped in this worker: a database call failed (${messageOf(cause)}).`);
    this.name = 'DatabaseFault';
  }
}

/** The protocol's name for why a turn was lost. */
function lostReason(error: Error): LostReason {
  if (error instanceof HandedBack) return 'handed_back';
  if (error instanceof RetryParked) return 'retry';
  if (error instanceof DatabaseFault) return 'database';
  return 'fenced_out';
}

export class Fence {
  readonly cancellation = new AbortController();
  /** The error that made this worker stop working on the turn (the protocol's `hold.lost` says why). */
  lost: Error | null = null;
  /** The protocol's hold on the turn. */
  hold: Hold;
  /**
   * The state the protocol deferred (`defer_write`), as its commit without the inbox rows applied
   * (the protocol gives those when it is written); null when none waits.
   */
  private deferred: Omit<Commit, 'applied'> | null = null;
  /** The write of the deferred state while it is in flight: every other database call of the turn waits for it. */
  private carrying: Promise<unknown> | null = null;

  constructor(
    readonly store: Leases,
    readonly lease: Lease,
    readonly report: Report,
  ) {
    this.hold = openHold(lease.id, lease.token);
  }

  /** Feeds the protocol an event; returns the effects to perform. */
  decide(event: ProtocolEvent): ProtocolEffect[] {
    const [hold, effects] = protocolStep(this.hold, event);
    this.hold = hold;
    return effects;
  }

  /** Stops the turn's work in this worker: the turn belongs to another writer now. */
  lose(error: Error): void {
    if (this.lost === null) this.lost = error;
    for (const effect of this.decide({ type: 'lost', reason: lostReason(error) })) {
      if (effect.type === 'stop') this.cancellation.abort(error.message);
    }
  }

  /** The lease to write with for an effect fenced on `token`: the protocol never asks for an unfenced write. */
  fencedLease(token: number | null): Lease {
    if (token !== this.lease.token)
      throw new Error(
        `Refusing a write of turn '${this.lease.id}' fenced on token ${String(token)}: the worker holds token ${this.lease.token}.`,
      );
    return this.lease;
  }

  /** Trips the fence for a fenced-out error; true when it was one. */
  caught(error: unknown): boolean {
    if (!isFencedOut(error)) return false;
    this.lose(error);
    return true;
  }

  /** Throws the error that lost the turn, if one did. */
  check(): void {
    if (this.hold.lost !== null) throw this.lost ?? new Error(`Turn '${this.lease.id}' left this worker (${this.hold.lost}).`);
  }

  /** Keeps `commit` (a state the protocol deferred) for the write that carries it. */
  defer(commit: Omit<Commit, 'applied'>): void {
    this.deferred = commit;
  }

  /**
   * The deferred state's commit, taken (null when none waits): a later write of the turn carries
   * it, its log entries and ignored rows first.
   */
  takeDeferred(): Omit<Commit, 'applied'> | null {
    const deferred = this.deferred;
    this.deferred = null;
    return deferred;
  }

  /**
   * Writes the deferred state (`write_deferred`, or `commit_with_start` with `start`: the call's
   * start in the same statement) with the inbox rows the protocol gives, and tells the protocol
   * it committed. Every other database call of the turn waits until it is done.
   */
  async writeDeferred(token: number | null, applied: readonly string[], start?: { id: string; name: string }): Promise<void> {
    const deferred = this.takeDeferred();
    if (deferred === null)
      throw new Error(`Turn '${this.lease.id}': the protocol asked to write a deferred state that was never kept.`);
    const lease = this.fencedLease(token);
    const written = this.write(() =>
      this.store.commit(lease, { ...deferred, applied, ...(start === undefined ? {} : { start }) }),
    );
    this.carrying = written;
    try {
      await written;
    } finally {
      if (this.carrying === written) this.carrying = null;
    }
    this.decide({ type: 'committed', applied });
  }

  /** Runs a database call for the turn; any failure trips the fence and is rethrown. */
  async write<T>(work: () => Promise<T>): Promise<T> {
    // A call of the batch waits for the write of its state (a journal row never precedes its batch's state).
    if (this.carrying !== null) await this.carrying.catch(() => undefined);
    this.check();
    try {
      return await work();
    } catch (error) {
      if (!this.caught(error)) this.lose(new DatabaseFault(this.lease.id, error));
      throw error;
    }
  }
}
