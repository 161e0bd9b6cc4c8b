// Planted bugs: each is the real protocol with one decision changed (a wrapper, as the turn
// machine's mutants wrap core's `step`), and the invariant the exploration must catch it by.

import { protocol, type Protocol } from '@turnkit/store/internal';
import type { StoreInvariant } from './explore.js';

export interface ProtocolMutant {
  readonly name: string;
  readonly description: string;
  /** The invariant the exploration must find broken. */
  readonly invariant: StoreInvariant;
  readonly protocol: Protocol;
  /** The exploration it runs on, by name (default: the first). */
  readonly check?: string;
}

/** The exploration with a thread (report.ts's STORE_CHECKS names it so). */
export const THREAD_CHECK = 'a thread: t2 submitted while t1 is parked, a death';

/**
 * Planted bugs in the store's protocol (a write without its fence, a claim that ignores a live lease, …), each with the
 * invariant that must catch it: the check proves it can fail.
 */
export const PROTOCOL_MUTANTS: readonly ProtocolMutant[] = [
  {
    name: 'skip the fence check on a write',
    description: 'a write is issued without its token, even by a worker that knows it lost the turn',
    invariant: 4,
    protocol: {
      ...protocol,
      step: (hold, event) => {
        // A state's write: a commit, or a deferred state's, with the first call's start.
        if (event.type !== 'write' && event.type !== 'call_starting') return protocol.step(hold, event);
        const [next, effects] = protocol.step({ ...hold, lost: null }, event);
        return [
          next,
          effects.map((e) =>
            e.type === 'commit' || e.type === 'commit_with_start' || e.type === 'write_deferred' ? { ...e, token: null } : e,
          ),
        ];
      },
    },
  },
  {
    name: 'apply an inbox row twice',
    description: 'decision rows stay in the hold after the commit that applied them, so the next commit applies them again',
    invariant: 3,
    protocol: { ...protocol, step: (hold, event) => (event.type === 'committed' ? [hold, []] : protocol.step(hold, event)) },
  },
  {
    name: 're-dispatch a call without a journaled result',
    description: 'a call journaled as started without a result is run again instead of being given up as interrupted',
    invariant: 1,
    protocol: {
      ...protocol,
      step: (hold, event) => protocol.step(hold, event.type === 'journal_read' ? { ...event, started: [] } : event),
    },
  },
  {
    name: 'take over a lease that has not expired',
    description: 'a claim takes a runnable turn whatever its lease',
    invariant: 6,
    protocol: { ...protocol, claimable: (row, now) => row.runnable && (row.runAfter === null || row.runAfter <= now) },
  },
  {
    name: 'never take over an expired lease',
    description: "a claim takes only turns with no lease at all, so a dead worker's turn is never recovered",
    invariant: 5,
    protocol: { ...protocol, claimable: (row, now) => row.leaseExpiresAt === null && protocol.claimable(row, now) },
  },
  {
    name: "run a thread's turns at once",
    description: 'a claim takes a turn of a thread whose earlier turn has not ended',
    invariant: 7,
    protocol: { ...protocol, claimable: (row, now) => protocol.claimable({ ...row, threadBusy: false }, now) },
    check: THREAD_CHECK,
  },
];
