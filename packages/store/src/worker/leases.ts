// The lease API over a connection: claims, renewals, fenced writes, the inbox and the journal, each
// one SQL operation (../sql/). Reads an earlier statement already answered are not made again
// (KnownReads).

import type { Wakeups } from '../db/notify.js';
import type { Sql } from '../db/types.js';
import { readChildLog } from '../sql/child-log.js';
import { claimTurns } from '../sql/claim.js';
import { commitTurn } from '../sql/commit.js';
import { journalResult, journalStart } from '../sql/journal-call.js';
import { nextDue } from '../sql/next-due.js';
import { pendingInbox } from '../sql/pending-inbox.js';
import { readJournal } from '../sql/read-journal.js';
import { releaseLease } from '../sql/release.js';
import { renewLease } from '../sql/renew.js';
import type { Claim, Commit, JournalRead, Lease, PendingInbox } from '../types.js';
import type { Leases } from './types.js';

/** The lease API over a connection (`db` throws once the store is closed). */
export function createLeases(db: () => Sql, wakeups: Wakeups): Leases {
  const known = new KnownReads();
  return {
    childLog: async (lease) => readChildLog(db(), lease.id),
    claim: async (options) => known.claimed(await claimTurns(db(), { ...options, limit: 1 }))[0] ?? null,
    claimMany: async (options) => known.claimed(await claimTurns(db(), options)),
    release: async (lease) => {
      await releaseLease(db(), lease);
      wakeups.wake();
    },
    nextDue: async (what = 'any') => nextDue(db(), what),
    listen: (handlers) => wakeups.listen(handlers),
    renew: async (lease, leaseMs) => renewLease(db(), lease, leaseMs),
    commit: async (lease, commit) => {
      known.forget(lease);
      const journal = await commitTurn(db(), lease, commit);
      known.committed(lease, commit, journal);
      wakeups.wake(commit.release === true && commit.retryAfterMs === undefined);
    },
    pendingInbox: async (lease) => known.takeInbox(lease) ?? pendingInbox(db(), lease),
    journal: async (lease, callIds) => known.takeJournal(lease, callIds) ?? readJournal(db(), lease, callIds),
    callStarted: async (lease, call) => {
      known.forget(lease);
      await journalStart(db(), lease, call);
    },
    callFinished: async (lease, result) => {
      known.forget(lease);
      return journalResult(db(), lease, result);
    },
  };
}

/**
 * Reads a worker would make whose answer an earlier statement already returned: the pending inbox
 * its claim read (the look for a cancel at the start, and for decisions when the turn is parked),
 * and the journal of the batch a checkpoint starts (read by the checkpoint itself). Each answers
 * only the lease it was read for and is forgotten at that lease's next write, so an answer never
 * predates the lease's own last write. A row that arrives later is found by the next read, or
 * keeps the turn runnable when it is released (see ../sql/commit.ts).
 */
class KnownReads {
  private readonly inbox = new WeakMap<Lease, readonly PendingInbox[]>();
  private readonly journals = new WeakMap<Lease, { readonly callIds: ReadonlySet<string>; readonly read: JournalRead }>();

  claimed(claims: Claim[]): Claim[] {
    for (const claim of claims) this.inbox.set(claim.lease, claim.pending);
    return claims;
  }

  committed(lease: Lease, commit: Commit, journal: JournalRead | null): void {
    const calls = commit.state?.batch?.calls;
    if (journal !== null && calls !== undefined)
      this.journals.set(lease, { callIds: new Set(calls.map((c) => c.id)), read: journal });
  }

  forget(lease: Lease): void {
    this.journals.delete(lease);
    this.inbox.delete(lease);
  }

  /** The claim's inbox rows, until the lease's first write (a worker takes each row once: it keeps what it took). */
  takeInbox(lease: Lease): PendingInbox[] | null {
    const rows = this.inbox.get(lease);
    return rows === undefined ? null : [...rows];
  }

  takeJournal(lease: Lease, callIds: readonly string[]): JournalRead | null {
    const known = this.journals.get(lease);
    this.journals.delete(lease);
    if (known === undefined || !callIds.every((id) => known.callIds.has(id))) return null;
    const wanted = new Set(callIds);
    return {
      results: known.read.results.filter((r) => wanted.has(r.callId)),
      started: known.read.started.filter((id) => wanted.has(id)),
    };
  }
}
