// The client's types: what a caller submits and reads back, and the client itself (`StoreClient`).
// Everything stored is plain JSON.

import type {
  ApprovalDecision,
  Message,
  Notice,
  Outcome,
  ParkedCall,
  ToolResult,
  TurnError,
  TurnLimitsInput,
  TurnState,
} from '@turnkit/core';

/** A turn's status: core's status, or `failed` when the store failed it (unknown agent, unreadable state). */
export type StoredStatus = TurnState['status'];

export interface SubmitOptions {
  /** The name of an agent a worker registers (`createWorker({ agents: { [name]: … } })`). */
  readonly agent: string;
  readonly input?: string;
  /** Default: `turn_<uuid>`, a version 7 UUID (time-ordered: see `newTurnId`). Submitting an id that exists is an error. */
  readonly id?: string;
  /** Merged over the agent's limits (these win). Checked now: a bad limit throws here. */
  readonly limits?: TurnLimitsInput;
}

/** A decision or cancel as the inbox holds it: `pending` until a worker applies it with the state it changes. */
export interface InboxEntry {
  readonly kind: 'decision' | 'cancel';
  /** The call decided (decisions only). */
  readonly callId: string | null;
  /** The decision; null for a cancel, or for a decision row that cannot be read (it decides nothing). */
  readonly decision: ApprovalDecision | null;
  /** Why the turn was cancelled (cancels only). */
  readonly reason: string | null;
  readonly status: 'pending' | 'applied' | 'ignored';
  readonly createdAt: string;
  readonly appliedAt: string | null;
}

/** One call in the tool journal: started (a tool began), finished (its result is written). */
export interface JournalEntry {
  readonly callId: string;
  readonly name: string;
  readonly startedAt: string | null;
  readonly finishedAt: string | null;
  readonly result: ToolResult | null;
}

/** A turn as `store.get` reads it. Times are ISO 8601 strings. */
export interface StoredTurn {
  readonly id: string;
  readonly agent: string;
  readonly status: StoredStatus;
  readonly input: string | null;
  /** The last written state; null before a worker first took the turn, or when the stored state cannot be read (see `error`). */
  readonly state: TurnState | null;
  /** The conversation as written so far (the agent's system prompt is not stored: it is code). */
  readonly transcript: readonly Message[];
  /**
   * Parked calls with no decision yet (neither applied nor waiting in the inbox). Each has `call`, as
   * the model sent it, and `input`, the input that runs if it is approved: show `input`.
   */
  readonly parked: readonly ParkedCall[];
  /** Every decision and cancel received, in order. */
  readonly decisions: readonly InboxEntry[];
  readonly toolCalls: readonly JournalEntry[];
  readonly outcome: Outcome | null;
  /** Why the store failed the turn (unknown agent, unreadable state), else the outcome's error, else null. */
  readonly error: TurnError | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly endedAt: string | null;
}

export interface TurnSummary {
  readonly id: string;
  readonly agent: string;
  readonly status: StoredStatus;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface ListOptions {
  readonly status?: StoredStatus;
  /** Default 50, at most 1000. */
  readonly limit?: number;
  /** The `cursor` of the previous page. */
  readonly cursor?: string | null;
}

export interface TurnPage {
  readonly turns: readonly TurnSummary[];
  /** Pass to `list` for the next page; null on the last page. */
  readonly cursor: string | null;
}

/** What `decide` stored: every call id given (a request with any call it cannot take throws and stores nothing). */
export interface DecideResult {
  /** The call ids decided, in the order given. */
  readonly accepted: readonly string[];
  /** Always empty: a call with a decision already makes `decide` throw CallAlreadyDecidedError. Kept so callers reading it keep working. */
  readonly ignored: readonly string[];
}

/** What happens to a turn, in the order it was written. `seq` counts from 1 per turn. */
export type WatchEvent =
  | { readonly type: 'message'; readonly seq: number; readonly message: Message }
  | { readonly type: 'notice'; readonly seq: number; readonly notice: Notice }
  | { readonly type: 'status'; readonly seq: number; readonly status: StoredStatus; readonly outcome: Outcome | null };

export interface WatchOptions {
  /** Start after this `seq` (default 0: the whole history, then what follows). */
  readonly after?: number;
  /** How often to look for new rows. Default 200. */
  readonly pollMs?: number;
  readonly signal?: AbortSignal;
}

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
