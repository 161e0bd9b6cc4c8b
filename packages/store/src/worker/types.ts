// The worker's types: what it is given (agents, options) and the lease API it uses (`Leases`). One
// writer per turn: every write carries the lease's token.

import type { Message, Model, Notice, ToolResult, TurnError, TurnLimitsInput, TurnState } from '@turnkit/core';
import type { AfterHook, BeforeHook, Budget, BudgetUsage, Grant, Permissions, Policy, ToolDefinition } from '@turnkit/dispatch';
import type { CheckFn, OutputSchema } from '@turnkit/inline';
import type { StoredStatus } from '../client/types.js';
import type { ListenHandlers } from '../db/types.js';
import type { WorkerObserver, WorkerStats } from './events.js';
import type { ActivationObserver, StoredActivation } from './observe.js';

/** A worker's hold on one turn. `version` moves forward with each write (compare-and-swap). */
export interface Lease {
  readonly id: string;
  readonly owner: string;
  readonly token: number;
  version: number;
  status: StoredStatus;
}

/** A pending inbox row, as a worker reads it. */
export interface PendingInbox {
  readonly inboxId: string;
  readonly kind: 'decision' | 'cancel';
  readonly callId: string | null;
  readonly decision: unknown;
  readonly reason: string | null;
}

/** A claimed turn: everything a worker needs to run it. `state` is raw (parse it with parseTurnState). */
export interface Claim {
  readonly lease: Lease;
  readonly agent: string;
  readonly input: string | null;
  readonly limits: TurnLimitsInput | null;
  readonly state: unknown;
  readonly grants: readonly Grant[];
  readonly budgetUsage: BudgetUsage | null;
  readonly transcript: readonly Message[];
  /** What the last activation's observer saved (`AgentDefinition.observe`), as read back: untrusted; null when none. */
  readonly traceContext: unknown;
  /** The turn's pending inbox rows when it was claimed (a store answers the worker's first inbox read with them). */
  readonly pending: readonly PendingInbox[];
  /** The database's clock when the turn was claimed (epoch ms): the worker keeps a turn's time by it (approval deadlines). */
  readonly now?: number;
}

/** One write: state, the messages and notices since the last write, and inbox rows applied. */
export interface Commit {
  readonly state?: TurnState;
  readonly messages?: readonly Message[];
  readonly notices?: readonly Notice[];
  /** Inbox rows whose effect `state` includes: marked applied in the same transaction. */
  readonly applied?: readonly string[];
  /** Of `applied`, the decision rows core did not take (`decisionsTaken`): marked ignored instead. */
  readonly ignored?: readonly string[];
  readonly grants?: readonly Grant[];
  readonly budgetUsage?: BudgetUsage;
  /** The store fails the turn (state is left as stored). */
  readonly fail?: TurnError;
  /** Give the turn back: it becomes claimable again only if there is something to do. */
  readonly release?: boolean;
  /** With `release`: the turn waits in the database this long (a model call's retry backoff) before any worker may take it. */
  readonly retryAfterMs?: number;
  /** JSON text the activation's observer asks to keep with the turn (its trace context), for the next activation. */
  readonly traceContext?: string;
}

export interface ClaimOptions {
  readonly owner: string;
  readonly leaseMs: number;
  /** Claim only these turns (default: any runnable turn). */
  readonly turnIds?: readonly string[];
}

export interface ClaimManyOptions extends ClaimOptions {
  /** At most this many turns (the worker's free capacity). */
  readonly limit: number;
  /** At most this many turns of an agent held at once, counted across every worker of the database. */
  readonly caps?: Readonly<Record<string, number>>;
}

/** What the journal knows of some calls: results written, and calls started without a result. */
export interface JournalRead {
  readonly results: ToolResult[];
  readonly started: string[];
}

/** The lease API of a store: what a worker uses to claim turns and write them, fenced by the lease's token. */
export interface Leases {
  /** Claims the oldest runnable turn (see claimMany). */
  claim(options: ClaimOptions): Promise<Claim | null>;
  /** Claims up to `limit` runnable turns, oldest first, in one statement (FOR UPDATE SKIP LOCKED); `caps` limit agents across workers. */
  claimMany(options: ClaimManyOptions): Promise<Claim[]>;
  /** Hands a held turn back (fenced): its lease ends now and workers are woken to take it. */
  release(lease: Lease): Promise<void>;
  /**
   * Milliseconds until a waiting turn becomes claimable, or null if none waits: `'any'` (default)
   * counts retries falling due and leases expiring, `'retries'` only retries.
   */
  nextDue(what?: 'any' | 'retries'): Promise<number | null>;
  /**
   * Hears when a turn may have become runnable: from this process, and on Postgres from every
   * process (LISTEN/NOTIFY on a connection that reconnects). Resolves to the stop.
   */
  listen(handlers: ListenHandlers): Promise<() => Promise<void>>;
  /** Extends the lease; throws LeaseLostError when another worker took the turn. */
  renew(lease: Lease, leaseMs: number): Promise<void>;
  /** One compare-and-swap write; throws LeaseLostError or ConflictError. */
  commit(lease: Lease, commit: Commit): Promise<void>;
  /** Inbox rows not yet applied. */
  pendingInbox(lease: Lease): Promise<PendingInbox[]>;
  /** What the journal knows of these calls: results written, and calls started without a result. */
  journal(lease: Lease, callIds: readonly string[]): Promise<JournalRead>;
  /** Journals that a call is about to run (before its tool starts). Fenced. */
  callStarted(lease: Lease, call: { readonly id: string; readonly name: string }): Promise<void>;
  /** Journals a call's result; the first result per call wins (returns false for a later one). Fenced. */
  callFinished(lease: Lease, result: ToolResult): Promise<boolean>;
}

/** An agent: the code a turn names. Registered with a worker, never stored. */
export interface AgentDefinition {
  readonly model: Model;
  // any: each tool has its own input type.
  readonly tools?: readonly ToolDefinition<any>[];
  readonly system?: string;
  /** Turn limits; a turn's own `limits` (from submit) win. */
  readonly limits?: TurnLimitsInput;
  readonly policy?: Policy;
  readonly permissions?: Permissions;
  readonly hooks?: { readonly before?: readonly BeforeHook[]; readonly after?: readonly AfterHook[] };
  readonly budget?: Budget;
  /**
   * How long a person has to decide a parked call (ms) of a tool without its own
   * `approvalTimeoutMs`; then the stored turn rejects it as expired (the time is kept in the
   * database). Default: a parked call waits until it is decided.
   */
  readonly approvalTimeoutMs?: number;
  readonly output?: OutputSchema;
  readonly check?: CheckFn;
  /**
   * At most this many turns of this agent run at once across every worker of the database (a
   * model's rate limit is shared by every machine). Every worker should register the same cap.
   */
  readonly maxRunning?: number;
  /**
   * Called each time a worker starts running a turn of this agent (an activation), for observers of
   * that run: `onEffect`, `onStep`, `wrapExecution`, and a trace context saved with the turn for
   * the next activation. @turnkit/otel's `traceTurn` returns one:
   * `observe: (a) => traceTurn({ agent: a.agent, link: a.traceContext, transcript: a.transcript })`.
   */
  readonly observe?: (activation: StoredActivation) => ActivationObserver;
}

export interface WorkerOptions {
  /** A store from openStore(): the worker uses its lease API. */
  readonly store: Leases;
  readonly agents: { readonly [name: string]: AgentDefinition };
  /** Turns run at once. Default 4. */
  readonly concurrency?: number;
  /** How long a claim lasts without renewal; renewed every third of it while the turn runs. Default 30000. */
  readonly leaseMs?: number;
  /**
   * The longest `start()` sleeps when idle. Wake-ups come sooner: a turn submitted, decided,
   * cancelled or handed back (LISTEN/NOTIFY on Postgres, in-process on PGlite), a turn leaving
   * this worker, a retry falling due. Default 2000.
   */
  readonly pollMs?: number;
  /** Run only these turns (a script that runs the turns it submitted); default: any runnable turn. */
  readonly turnIds?: readonly string[];
  /** This worker's name in lease rows. Default `worker_<uuid>`. */
  readonly id?: string;
  /** Hears faults the worker survives (a lost lease, a database error); the turn is left for another try. */
  readonly onError?: (error: unknown, turnId: string | null) => void;
  /** Hears what the worker does: turns claimed and leaving, the database lost and back, draining (see describeWorkerEvent). */
  readonly observer?: WorkerObserver;
}

export interface Worker {
  readonly id: string;
  /** Claims and runs turns in the background until `stop()`. */
  start(): void;
  /**
   * Stops claiming and waits for the turns it holds to finish or park. With `deadlineMs`, what
   * still runs when it passes is handed back: its work stops, nothing more of it is written, and
   * its lease ends so another worker takes it at once (a tool cut short is `interrupted`).
   */
  stop(options?: { readonly deadlineMs?: number }): Promise<void>;
  /** What the worker holds and has done since it started. */
  stats(): WorkerStats;
  /** Claims and runs turns until none is runnable and none is running (for tests and scripts). */
  runUntilIdle(): Promise<void>;
}
