// A worker's loop: claim up to its free capacity, run each claimed turn, sleep until woken. Wake-ups
// come from the store (a turn became runnable: LISTEN/NOTIFY on Postgres, in-process on PGlite),
// from a turn leaving this worker, and from the time the next waiting turn falls due; polling is
// only the fallback. A worker at capacity runs no claim at all, so a burst of notifications costs
// one claim per free slot, not one per worker per notification.

import { definedProps } from '@turnkit/core/internal';
import { messageOf } from '../errors.js';
import { runActivation } from './activation.js';
import type { WorkerEvent, WorkerObserver, WorkerStats } from './events.js';
import { Fence, HandedBack, type Report } from './fence.js';
import { claimLimit, type Departure } from './protocol.js';
import type { Claim } from '../types.js';
import type { AgentDefinition, Leases } from './types.js';

export interface LoopOptions {
  readonly store: Leases;
  readonly agents: { readonly [name: string]: AgentDefinition };
  readonly id: string;
  readonly concurrency: number;
  readonly leaseMs: number;
  readonly pollMs: number;
  readonly caps: Readonly<Record<string, number>>;
  readonly report: Report;
  readonly observer: WorkerObserver | undefined;
  readonly turnIds: readonly string[] | undefined;
}

/** The longest wait between claims while the database is unreachable. */
const MAX_BACKOFF_MS = 5_000;
/** The shortest sleep: a turn due in under this is claimed after it. */
const MIN_SLEEP_MS = 5;

type Counter = Exclude<keyof WorkerStats, 'held'>;
const COUNTER: Record<Departure, Counter> = {
  finished: 'finished',
  parked: 'parked',
  retry: 'retrying',
  lost: 'lost',
  handed_back: 'handedBack',
};

export class WorkerLoop {
  private readonly held = new Map<string, { readonly fence: Fence; readonly done: Promise<void> }>();
  private readonly counts: Record<Counter, number> = {
    claimed: 0,
    finished: 0,
    parked: 0,
    retrying: 0,
    lost: 0,
    handedBack: 0,
    claims: 0,
  };
  private loop: Promise<void> | null = null;
  private stopping = false;
  private kicked = false;
  private wakeSleep: (() => void) | null = null;
  private unlisten: (() => Promise<void>) | null = null;
  private failures = 0;

  constructor(private readonly o: LoopOptions) {}

  stats(): WorkerStats {
    return { held: this.held.size, ...this.counts };
  }

  /** Something may be runnable: claim again now (or right after the claim in flight). */
  readonly kick = (): void => {
    this.kicked = true;
    this.wakeSleep?.();
  };

  private observe(event: WorkerEvent): void {
    try {
      this.o.observer?.(event, this.stats());
    } catch {
      // An observer must not break the worker.
    }
  }

  /** Claims up to the free capacity in one statement; `full` when every free slot was filled. */
  async fill(): Promise<{ claimed: number; full: boolean }> {
    const free = claimLimit({ held: this.held.size, concurrency: this.o.concurrency, stopping: this.stopping });
    if (free === 0) return { claimed: 0, full: true };
    const { store, id, leaseMs, caps, turnIds } = this.o;
    const claims = await store.claimMany({ owner: id, leaseMs, limit: free, caps, ...definedProps({ turnIds }) });
    this.counts.claims += 1;
    for (const claim of claims) this.run(claim);
    return { claimed: claims.length, full: claims.length === free };
  }

  private run(claim: Claim): void {
    const { store, agents, leaseMs, report } = this.o;
    const turnId = claim.lease.id;
    const fence = new Fence(store, claim.lease, report);
    this.counts.claimed += 1;
    const done = runActivation(store, claim, agents, leaseMs, report, fence)
      .catch((error: unknown): Departure => {
        report(error, turnId);
        return 'lost';
      })
      .then((how) => {
        this.held.delete(turnId);
        this.counts[COUNTER[how]] += 1;
        this.observe({ type: 'left', turnId, how });
        this.kick();
      });
    this.held.set(turnId, { fence, done });
    this.observe({ type: 'claimed', turnId, agent: claim.agent, token: claim.lease.token });
  }

  /** Turns running now, to wait for. */
  running(): Promise<void>[] {
    return [...this.held.values()].map((h) => h.done);
  }

  start(): void {
    if (this.loop !== null) return;
    this.stopping = false;
    this.observe({ type: 'started', worker: this.o.id });
    this.loop = (async () => {
      try {
        this.unlisten = await this.o.store.listen({
          onNotify: this.kick,
          onConnection: (state, error) => this.database(state, error),
        });
      } catch (error) {
        this.o.report(error, null); // polling still finds the work
      }
      await this.main();
    })();
  }

  private database(state: 'lost' | 'restored', error?: unknown): void {
    this.observe(state === 'lost' ? { type: 'database', state, error: messageOf(error) } : { type: 'database', state });
  }

  private async main(): Promise<void> {
    while (!this.stopping) {
      this.kicked = false;
      const wait = await this.round();
      if (this.kicked || this.stopping) continue;
      await this.sleep(wait);
    }
  }

  /** One claim; returns how long to sleep unless woken (the next due turn, the poll, or a backoff). */
  private async round(): Promise<number> {
    const { store, pollMs, report } = this.o;
    try {
      const { full } = await this.fill();
      const due = full ? null : await store.nextDue();
      if (this.failures > 0) {
        this.failures = 0;
        this.database('restored');
      }
      return Math.max(MIN_SLEEP_MS, Math.min(pollMs, due ?? pollMs));
    } catch (error) {
      this.failures += 1;
      if (this.failures === 1) this.database('lost', error);
      report(error, null);
      return Math.min(MAX_BACKOFF_MS, 100 * 2 ** Math.min(this.failures, 10));
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      const wakeSleep = (): void => done();
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wakeSleep = wakeSleep;
    }).finally(() => {
      this.wakeSleep = null;
    });
  }

  /**
   * Stops claiming and waits for the turns held to finish or park. With a deadline, what is still
   * running when it passes is handed back: its work stops, nothing more is written by it, and its
   * lease ends so another worker takes it at once.
   */
  async stop(deadlineMs: number | null): Promise<void> {
    this.stopping = true;
    this.kick();
    await this.loop;
    this.loop = null;
    this.observe({ type: 'draining', held: this.held.size, deadlineMs });
    const timer =
      deadlineMs === null
        ? null
        : setTimeout(() => {
            for (const { fence } of this.held.values()) fence.lose(new HandedBack(fence.lease.id));
          }, deadlineMs);
    await Promise.all(this.running());
    if (timer !== null) clearTimeout(timer);
    const unlisten = this.unlisten;
    this.unlisten = null;
    await unlisten?.().catch(() => undefined);
    this.observe({ type: 'stopped' });
  }
}
