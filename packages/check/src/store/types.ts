// The model world's types: what a bounded exploration is given (WorldConfig), and the world itself,
// plain JSON: the rows, the workers' holds, and what the invariants need (the ghost).

import type { Hold } from '@turnkit/store/internal';

/** A call of a turn's one tool batch; a `parked` call waits for a decision and runs once approved. */
export interface CallSpec {
  readonly id: string;
  readonly parked: boolean;
}

export interface TurnSpec {
  readonly id: string;
  readonly calls: readonly CallSpec[];
  /** The thread the turn belongs to: it runs only when no earlier turn of the thread is open. */
  readonly thread?: string;
  /**
   * The id of an earlier turn: this turn is submitted by the user while that one is parked for
   * approval (or once it has ended), not before. Without it the turn is submitted at the start.
   */
  readonly submitWhileParked?: string;
}

/**
 * A bounded world of the store model check: worker processes, turns with their calls, and how many deaths, lease
 * pauses, retries and cancels may happen.
 */
export interface WorldConfig {
  /** Worker processes (each runs one turn at a time). */
  readonly workers: number;
  /** The turns submitted, each with its calls (parked or not) and, optionally, its thread. */
  readonly turns: readonly TurnSpec[];
  /** Process deaths allowed (a dead worker restarts at once with nothing in memory; its lease stays until it expires). */
  readonly deaths: number;
  /** Leases that may expire under a live worker (a pause longer than the lease: the worker does not know). */
  readonly pauses: number;
  /** A turn's first model call may fail this many times in all, each retried after a wait in the database (default 0). */
  readonly retries?: number;
  /** Cancels the user may send in all (default 0). */
  readonly cancels?: number;
}

export type Phase = 'ready' | 'dispatching' | 'awaiting_approval' | 'executing_approved' | 'done';

export interface TurnRow {
  /** The row exists (a turn with `submitWhileParked` is inserted by the user's submit). */
  submitted: boolean;
  token: number;
  owner: number | null;
  /** The lease has not expired (meaningful while `owner` is set). */
  live: boolean;
  version: number;
  status: Phase;
  runnable: boolean;
  /** A model call's retry: none, waiting for its time (`run_after` ahead), or due. */
  retry: 'none' | 'waiting' | 'due';
}

export interface JournalRow {
  /** The token the call's start was journaled under (null: not started). */
  started: number | null;
  result: 'ok' | 'interrupted' | null;
}

export interface InboxEntry {
  readonly id: string;
  readonly turn: number;
  readonly kind: 'decision' | 'cancel';
  /** The decided call (a cancel names none). */
  readonly call: string | null;
  status: 'pending' | 'applied' | 'ignored';
  /** How many committed states applied this row (kept for the invariants; the table has no such column). */
  timesApplied: number;
}

/** One step of a worker's driver. */
export type Op =
  | { readonly op: 'model_call' }
  | { readonly op: 'read_inbox'; readonly parked: boolean }
  | { readonly op: 'read_journal' }
  | {
      readonly op: 'write';
      readonly terminal: boolean;
      readonly release: boolean;
      readonly derivable?: boolean;
      readonly batch?: boolean;
    }
  | {
      readonly op: 'commit';
      readonly token: number | null;
      readonly applied: readonly string[];
      readonly release: boolean;
      /** The call whose start is journaled in the same statement (the store's commit with `start`). */
      readonly start?: string;
    }
  | { readonly op: 'start'; readonly call: string }
  | { readonly op: 'journal_start'; readonly call: string; readonly token: number }
  | { readonly op: 'run_tool'; readonly call: string }
  | { readonly op: 'write_result'; readonly call: string; readonly token: number; readonly interrupted: boolean }
  | { readonly op: 'after_batch' }
  | { readonly op: 'depart' };

export interface HoldModel {
  readonly turn: number;
  hold: Hold;
  /** The version the worker's compare-and-swap expects. */
  version: number;
  /** The turn's state in the worker's memory, and the status last committed. */
  phase: Phase;
  stored: Phase;
  ops: Op[];
}

export interface World {
  rows: TurnRow[];
  /** Per turn, per call (in spec order). */
  journal: JournalRow[][];
  /** Sorted by id. */
  inbox: InboxEntry[];
  workers: (HoldModel | null)[];
  deathsLeft: number;
  pausesLeft: number;
  retriesLeft: number;
  cancelsLeft: number;
  /** What the invariants need that the rows do not keep. */
  ghost: {
    /** Per turn, per call: how many times its tool's side effect started. */
    ran: number[][];
    /** `turn:token:worker` for every write (claim, journal, commit) that landed, sorted. */
    writers: string[];
    /** Per turn: tokens whose lease ended (expired or given back), sorted. */
    ended: number[][];
  };
}

export interface Action {
  readonly label: string;
  readonly next: World;
}
