// The durable protocol's decisions as a pure function, written the way core's `step` is: a
// worker's hold on one turn is plain JSON (`Hold`), what happened arrives as an event (a write
// committed or refused, the journal read, a tool finished, the inbox read, the lease lost), and
// what the worker does next comes back as effects. No I/O and no clock reads: time arrives in
// the rows a decision is given. The worker performs the effects with SQL (fence.ts, held-turn.ts,
// tool-journal.ts, activation.ts, loop.ts); the model check (@turnkit/check/internal) performs them
// on a model database, so what is checked is what runs.

/** Why a worker stopped working on a turn it claimed. */
export type LostReason = 'fenced_out' | 'database' | 'handed_back' | 'retry';

/** How a turn left the worker that ran it. */
export type Departure = 'finished' | 'parked' | 'retry' | 'lost' | 'handed_back';

/** A worker's hold on one claimed turn. */
export interface Hold {
  /** The claimed turn. */
  readonly turnId: string;
  /** The fencing token of the claim: every write of this hold is fenced on it. */
  readonly token: number;
  /** Set once: why this worker stopped working on the turn (null while it still runs it). */
  readonly lost: LostReason | null;
  /** Inbox rows this hold has taken: none is taken twice. */
  readonly consumed: readonly string[];
  /** Decision rows taken and not yet written with a state: they ride on the next commit. */
  readonly unwritten: readonly string[];
  /** The cancel row taken: written (closed) with the terminal state. */
  readonly cancelRow: string | null;
  /**
   * A state about to run its batch was not written yet: it is written with the batch's first
   * journal write (the first call's start in the same statement), or by the next write, whichever
   * comes first.
   */
  readonly deferred: boolean;
}

/** A pending inbox row as the protocol sees it. */
export interface InboxRow {
  /** The row's id. */
  readonly id: string;
  /** A decision on a parked call, or a cancel of the turn. */
  readonly kind: 'decision' | 'cancel';
  /** The call a decision is for; null for a cancel. */
  readonly callId: string | null;
}

/**
 * What a worker tells the protocol about one hold: what it read (inbox, journal), what a call or a write did, and how
 * the drive ended.
 */
export type ProtocolEvent =
  /** The turn's pending inbox rows were read; `parked`: the turn waits for decisions (else only a cancel is taken). */
  | { readonly type: 'inbox_read'; readonly rows: readonly InboxRow[]; readonly parked: boolean }
  /** A batch's journal rows were read: calls with a result, calls started without one. */
  | {
      readonly type: 'journal_read';
      readonly calls: readonly { readonly id: string; readonly idempotent: boolean }[];
      readonly results: readonly string[];
      readonly started: readonly string[];
    }
  /** A call is about to run: its start must be journaled first. */
  | { readonly type: 'call_starting'; readonly callId: string }
  /** The call's start is journaled. */
  | { readonly type: 'start_journaled'; readonly callId: string }
  /** A call's tool returned (or threw): its result is ready. */
  | { readonly type: 'tool_finished'; readonly callId: string }
  /**
   * The driver wants to write the turn's state (`terminal`: the state has ended; `release`: give the
   * lease back; `derivable`: the state follows from the last commit and the journal, as after a
   * batch whose every result is journaled, so recovery rebuilds it without this write; `batch`:
   * the state is about to run its batch, core's `dispatching` checkpoint).
   */
  | {
      readonly type: 'write';
      readonly terminal: boolean;
      readonly release: boolean;
      readonly derivable?: boolean;
      readonly batch?: boolean;
    }
  /** A commit landed, with the inbox rows it applied. */
  | { readonly type: 'committed'; readonly applied: readonly string[] }
  /** The worker stopped working on the turn: a write or renewal was refused (the fence moved), a database call failed, a drain deadline passed, a retry waits in the database. */
  | { readonly type: 'lost'; readonly reason: LostReason }
  /** The drive ended (`terminal`: the stored status is terminal). */
  | { readonly type: 'drive_ended'; readonly terminal: boolean };

/**
 * What the protocol tells a worker to do for one hold: take a cancel, apply decisions, use a journaled result, journal
 * an interrupted call, run a call, write, release, depart.
 */
export type ProtocolEffect =
  /** Take this cancel: stop the turn's work with its reason. */
  | { readonly type: 'take_cancel'; readonly row: string }
  /** Feed these decision rows to the turn, in this order. */
  | { readonly type: 'apply_decisions'; readonly rows: readonly string[] }
  /** The journal holds this call's result: use it, do not run the call. */
  | { readonly type: 'use_result'; readonly callId: string }
  /** The call started under an earlier claim and never reported: journal `interrupted` (fenced), do not run it. */
  | { readonly type: 'write_interrupted'; readonly callId: string; readonly token: number }
  /** Run the call (through the dispatcher: its start is journaled before its tool runs). */
  | { readonly type: 'run_call'; readonly callId: string }
  /** Journal the call as started (fenced). */
  | { readonly type: 'journal_start'; readonly callId: string; readonly token: number }
  /**
   * Write the deferred state (a `commit` of it, with these inbox rows) and journal the call as
   * started, in one statement: the state is compare-and-swapped under `token` and the start is
   * written only if it is (`token` null, unfenced, as for `commit`: never asked for).
   */
  | {
      readonly type: 'commit_with_start';
      readonly callId: string;
      readonly token: number | null;
      readonly applied: readonly string[];
    }
  /** Write the deferred state now (a `commit` of it, with these inbox rows), before the journal write that follows. */
  | { readonly type: 'write_deferred'; readonly token: number | null; readonly applied: readonly string[] }
  /**
   * Write nothing yet: the state is about to run its batch, and is written with the batch's first
   * journal write (or by the next write). Until then the turn recovers from the last state written,
   * as after a crash before this write.
   */
  | { readonly type: 'defer_write' }
  /** Run the call's tool now. */
  | { readonly type: 'run_tool'; readonly callId: string }
  /** Journal the call's result (fenced; a result already journaled is kept). */
  | { readonly type: 'write_result'; readonly callId: string; readonly token: number }
  /**
   * Compare-and-swap the state under `token` with the inbox rows it applies. `token` null is an
   * unfenced write: the real protocol never asks for one and the store refuses it.
   */
  | {
      readonly type: 'commit';
      readonly token: number | null;
      readonly applied: readonly string[];
      readonly release: boolean;
    }
  /**
   * Write nothing now: the state is derivable and nothing taken rides on it; the messages and
   * notices since the last commit ride on the next one.
   */
  | { readonly type: 'skip_write' }
  /** Stop the turn's work here: this worker writes nothing more for it. */
  | { readonly type: 'stop' }
  /** Write the state before a model call's retry with the time it is due, giving the lease back. */
  | { readonly type: 'park_retry'; readonly token: number; readonly applied: readonly string[] }
  /** End the lease now so another worker takes the turn at once (fenced). */
  | { readonly type: 'release'; readonly token: number }
  /** The turn leaves this worker. */
  | { readonly type: 'depart'; readonly how: Departure };

/** The protocol's decisions: `step` for a hold, `claimLimit` and `claimable` for a worker's claims. */
export interface Protocol {
  /** The next hold and the effects for an event (`protocolStep`). */
  readonly step: (hold: Hold, event: ProtocolEvent) => [Hold, ProtocolEffect[]];
  /** How many turns a worker claims now (`claimLimit`). */
  readonly claimLimit: (worker: ClaimingWorker) => number;
  /** Whether a claim may take a turn row now (`claimable`). */
  readonly claimable: (row: ClaimRow, now: number) => boolean;
}

/** What a worker's claim depends on. */
export interface ClaimingWorker {
  /** Turns the worker runs now. */
  readonly held: number;
  /** Turns it may run at once. */
  readonly concurrency: number;
  /** It is stopping (draining): it claims nothing more. */
  readonly stopping: boolean;
}

/** A turn row as a claim sees it (times in milliseconds on the database's clock; null: none). */
export interface ClaimRow {
  /** The row is marked runnable: it has work for a worker (a new turn, a decision, a cancel, a retry). */
  readonly runnable: boolean;
  /** When the current lease expires; null when there is none. */
  readonly leaseExpiresAt: number | null;
  /** When the turn may run again (a model-call retry's wait, an approval's deadline); null: at once. */
  readonly runAfter: number | null;
  /** The turn belongs to a thread and an earlier turn of it has not ended (absent: not in a thread). */
  readonly threadBusy?: boolean;
}

/** A new hold, right after a claim with `token`. */
export function openHold(turnId: string, token: number): Hold {
  return { turnId, token, lost: null, consumed: [], unwritten: [], cancelRow: null, deferred: false };
}

/** How many turns a worker claims now: its free capacity, none while it stops. */
export function claimLimit(worker: ClaimingWorker): number {
  return worker.stopping ? 0 : Math.max(0, worker.concurrency - worker.held);
}

/**
 * A turn a claim may take: marked runnable, its lease free or expired, its retry due, and no
 * earlier turn of its thread open (a thread runs one turn at a time). The claim statement
 * (`RUNNABLE_NOW` in claim.ts) is this predicate in SQL; a test compares the two.
 */
export function claimable(row: ClaimRow, now: number): boolean {
  return (
    row.runnable &&
    row.threadBusy !== true &&
    (row.leaseExpiresAt === null || row.leaseExpiresAt <= now) &&
    (row.runAfter === null || row.runAfter <= now)
  );
}

/** The protocol's step: the next hold and the effects for an event. Never throws on a well-typed event. */
export function protocolStep(hold: Hold, event: ProtocolEvent): [Hold, ProtocolEffect[]] {
  switch (event.type) {
    case 'inbox_read':
      return takeInbox(hold, event.rows, event.parked);
    case 'journal_read':
      return hold.lost !== null ? [hold, [{ type: 'stop' }]] : journalWrites(hold, journalDecisions(hold, event));
    case 'call_starting':
      if (hold.lost !== null) return [hold, [{ type: 'stop' }]];
      // The deferred state and the call's start in one statement: the start is never written without its batch's state.
      if (hold.deferred)
        return [
          { ...hold, deferred: false },
          [{ type: 'commit_with_start', callId: event.callId, token: hold.token, applied: [...hold.unwritten] }],
        ];
      return [hold, [{ type: 'journal_start', callId: event.callId, token: hold.token }]];
    case 'start_journaled':
      return [hold, hold.lost !== null ? [{ type: 'stop' }] : [{ type: 'run_tool', callId: event.callId }]];
    case 'tool_finished':
      // A turn this worker no longer holds keeps no result from here (recovery journals `interrupted`).
      return hold.lost !== null
        ? [hold, []]
        : journalWrites(hold, [{ type: 'write_result', callId: event.callId, token: hold.token }]);
    case 'write':
      if (hold.lost !== null) return [hold, [{ type: 'stop' }]];
      // A derivable state is skipped only when no decision taken waits to be written with it, and the
      // state it derives from was written (not deferred).
      if (event.derivable === true && !event.terminal && !event.release && hold.unwritten.length === 0 && !hold.deferred)
        return [hold, [{ type: 'skip_write' }]];
      // A state about to run its batch waits for the batch's first journal write.
      if (event.batch === true && !event.terminal && !event.release)
        return [{ ...hold, deferred: true }, [{ type: 'defer_write' }]];
      // Any other write writes the latest state, which includes the deferred one's.
      return [{ ...hold, deferred: false }, [commitEffect(hold, event.terminal, event.release)]];
    case 'committed': {
      // What the commit applied never rides on a later one: the decisions, and the cancel row it closed.
      const unwritten = hold.unwritten.filter((id) => !event.applied.includes(id));
      const cancelRow = hold.cancelRow !== null && event.applied.includes(hold.cancelRow) ? null : hold.cancelRow;
      return [{ ...hold, unwritten, cancelRow }, []];
    }
    case 'lost':
      return [hold.lost === null ? { ...hold, lost: event.reason } : hold, [{ type: 'stop' }]];
    case 'drive_ended':
      return departure(hold, event.terminal);
  }
}

/**
 * Journal writes (a start, a result, `interrupted`) while a state is deferred: the state is written
 * first (`write_deferred`), so the journal never holds a row for a batch whose state was not written.
 */
function journalWrites(hold: Hold, effects: ProtocolEffect[]): [Hold, ProtocolEffect[]] {
  if (!hold.deferred || !effects.some((e) => e.type === 'write_result' || e.type === 'write_interrupted')) return [hold, effects];
  return [
    { ...hold, deferred: false },
    [{ type: 'write_deferred', token: hold.token, applied: [...hold.unwritten] }, ...effects],
  ];
}

function commitEffect(hold: Hold, terminal: boolean, release: boolean): ProtocolEffect {
  const applied = terminal && hold.cancelRow !== null ? [...hold.unwritten, hold.cancelRow] : [...hold.unwritten];
  return { type: 'commit', token: hold.token, applied, release };
}

/** A cancel first (taken once); decisions only for a parked turn, each row once. */
function takeInbox(hold: Hold, rows: readonly InboxRow[], parked: boolean): [Hold, ProtocolEffect[]] {
  if (hold.lost !== null) return [hold, []];
  const fresh = rows.filter((r) => !hold.consumed.includes(r.id));
  const cancel = fresh.find((r) => r.kind === 'cancel');
  if (cancel !== undefined) {
    return [
      { ...hold, consumed: [...hold.consumed, cancel.id], cancelRow: cancel.id },
      [{ type: 'take_cancel', row: cancel.id }],
    ];
  }
  if (!parked) return [hold, []];
  const decisions = fresh.filter((r) => r.kind === 'decision' && r.callId !== null).map((r) => r.id);
  if (decisions.length === 0) return [hold, []];
  return [
    { ...hold, consumed: [...hold.consumed, ...decisions], unwritten: [...hold.unwritten, ...decisions] },
    [{ type: 'apply_decisions', rows: decisions }],
  ];
}

/** Per call, in order: its journaled result, `interrupted` for a start without a result (unless idempotent), or run it. */
function journalDecisions(hold: Hold, event: Extract<ProtocolEvent, { type: 'journal_read' }>): ProtocolEffect[] {
  return event.calls.map((call): ProtocolEffect => {
    if (event.results.includes(call.id)) return { type: 'use_result', callId: call.id };
    if (event.started.includes(call.id) && !call.idempotent)
      return { type: 'write_interrupted', callId: call.id, token: hold.token };
    return { type: 'run_call', callId: call.id };
  });
}

/** How the turn leaves: a parked retry is written, a handed-back or faulted turn's lease ends now. */
function departure(hold: Hold, terminal: boolean): [Hold, ProtocolEffect[]] {
  switch (hold.lost) {
    case 'retry':
      return [
        { ...hold, unwritten: [] },
        [
          { type: 'park_retry', token: hold.token, applied: [...hold.unwritten] },
          { type: 'depart', how: 'retry' },
        ],
      ];
    case 'handed_back':
      return [
        hold,
        [
          { type: 'release', token: hold.token },
          { type: 'depart', how: 'handed_back' },
        ],
      ];
    case 'database':
      return [
        hold,
        [
          { type: 'release', token: hold.token },
          { type: 'depart', how: 'lost' },
        ],
      ];
    case 'fenced_out':
      return [hold, [{ type: 'depart', how: 'lost' }]];
    case null:
      return [hold, [{ type: 'depart', how: terminal ? 'finished' : 'parked' }]];
  }
}

/**
 * Whether the journal of the batch about to run must be read: not while its state is deferred. A
 * batch's journal rows are written only after its state (`commit_with_start`, `write_deferred`),
 * and a turn's call ids are unique (core's `callIds`), so the batch of a state not yet written has
 * none: its every call runs (the read's answer is empty).
 */
export function journalNeedsRead(hold: Hold): boolean {
  return !hold.deferred;
}

/** The protocol the worker runs. */
export const protocol: Protocol = { step: protocolStep, claimLimit, claimable };
