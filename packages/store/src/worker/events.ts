// What a worker tells its observer: turns claimed and leaving, the database going away and coming
// back, draining. `describeWorkerEvent` is the one line `turnkit worker` writes for each on stderr.

import type { Departure } from './protocol.js';

/** A worker's counts since it started. */
export interface WorkerStats {
  /** Turns this worker runs now. */
  readonly held: number;
  /** Turns it has claimed. */
  readonly claimed: number;
  /** Turns that ended (stopped, failed, cancelled) here. */
  readonly finished: number;
  /** Turns it left waiting for a decision. */
  readonly parked: number;
  /** Turns it left waiting in the database for a model call's retry. */
  readonly retrying: number;
  /** Turns it stopped working on: the lease was taken over, or a database call failed. */
  readonly lost: number;
  /** Turns it handed back when its drain deadline passed. */
  readonly handedBack: number;
  /** Claim statements it ran (claims per turn shows how often a wake-up found nothing to take). */
  readonly claims: number;
}

/**
 * What a worker tells its `observer`: it started; it claimed a turn (with the lease's fencing token); a turn left it
 * (finished, parked, waiting for a retry, lost, handed back); the database was lost or restored; it is draining; it
 * stopped.
 */
export type WorkerEvent =
  | { readonly type: 'started'; readonly worker: string }
  | { readonly type: 'claimed'; readonly turnId: string; readonly agent: string; readonly token: number }
  | { readonly type: 'left'; readonly turnId: string; readonly how: Departure }
  | { readonly type: 'database'; readonly state: 'lost' | 'restored'; readonly error?: string }
  | { readonly type: 'draining'; readonly held: number; readonly deadlineMs: number | null }
  | { readonly type: 'stopped' };

/** Hears what a worker does; `stats` are the counts after the event. */
export type WorkerObserver = (event: WorkerEvent, stats: WorkerStats) => void;

const HOW: Record<Departure, string> = {
  finished: 'finished',
  parked: 'parked for a decision',
  retry: 'waits for a retry',
  lost: 'lost (another worker holds it, or the database failed)',
  handed_back: 'handed back',
};

/**
 * One line for an event, for a log or a terminal.
 *
 * @example
 * describeWorkerEvent({ type: 'claimed', turnId: 't1', agent: 'support', token: 3 }, stats)
 * // 'claimed t1 (agent support, token 3) · held 1, claimed 1, finished 0'
 */
export function describeWorkerEvent(event: WorkerEvent, stats: WorkerStats): string {
  const counts = `held ${stats.held}, claimed ${stats.claimed}, finished ${stats.finished}`;
  switch (event.type) {
    case 'started':
      return `worker ${event.worker} started`;
    case 'claimed':
      return `claimed ${event.turnId} (agent ${event.agent}, token ${event.token}) · ${counts}`;
    case 'left':
      return `${event.turnId} ${HOW[event.how]} · ${counts}`;
    case 'database':
      return event.state === 'lost'
        ? `database unreachable (${event.error ?? 'connection lost'}); retrying · ${counts}`
        : `database reachable again · ${counts}`;
    case 'draining':
      return `draining: ${event.held} turn(s) held${event.deadlineMs === null ? '' : `, handed back after ${event.deadlineMs} ms`}`;
    case 'stopped':
      return `stopped · ${counts}, parked ${stats.parked}, lost ${stats.lost}, handed back ${stats.handedBack}, claims ${stats.claims}`;
  }
}
