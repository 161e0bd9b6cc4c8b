// The worker's types: what it is given (agents, options) and the lease API it uses (`Leases`).

import type { Model, ToolResult, TurnLimitsInput } from '@turnkit/core';
import type { AfterHook, BeforeHook, Budget, DispatcherOptions, Policy, ToolDefinition } from '@turnkit/dispatch';
import type { CheckFn, CompactFn, OutputSchema } from '@turnkit/inline';
import type { ListenHandlers } from '../db/types.js';
import type { ChildLogEntry, Claim, ClaimManyOptions, ClaimOptions, Commit, JournalRead, Lease, PendingInbox } from '../types.js';
import type { WorkerObserver, WorkerStats } from './events.js';
import type { ActivationObserver, StoredActivation } from './observe.js';

/** The lease API of a store: what a worker uses to claim turns and write them, fenced by the lease's token. */
export interface Leases {
  /** A turn of many agents: its child turns' log entries, in order (docs/agents.md). */
  childLog(lease: Lease): Promise<ChildLogEntry[]>;
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
  /** The model every turn of this agent calls. */
  readonly model: Model;
  // any: each tool has its own input type.
  /** The agent's tools (`defineTool`). Default none. */
  readonly tools?: readonly ToolDefinition<any>[];
  /**
   * What the agent is for: the model of an agent that may delegate or hand off to it reads it.
   * Required of an agent another names in `delegates` or `handoffs`.
   */
  readonly description?: string;
  /**
   * Registered agents (by name) this agent may give a task to with `transfer_task`: each runs as a
   * child turn inside this turn's stored state (docs/agents.md).
   */
  readonly delegates?: readonly string[];
  /** Registered agents (by name) this agent may hand the rest of the turn to with `handoff`. */
  readonly handoffs?: readonly string[];
  /** Model ids this agent may switch the rest of the turn to with `change_model`. */
  readonly models?: readonly string[];
  /** The system prompt (code, never stored: it is sent first in every model request). */
  readonly system?: string;
  /** Turn limits; a turn's own `limits` (from submit) win. */
  readonly limits?: TurnLimitsInput;
  /** Decides calls the permission rules leave undecided (as `createDispatcher`'s `policy`). */
  readonly policy?: Policy;
  /** Permission rules, or layered named sets (as `createDispatcher` takes them). */
  readonly permissions?: DispatcherOptions['permissions'];
  /** Before- and after-hooks around every tool call (as `createDispatcher`'s `hooks`). */
  readonly hooks?: { readonly before?: readonly BeforeHook[]; readonly after?: readonly AfterHook[] };
  /** Tool-call budgets of a turn (as `createDispatcher`'s `budget`); the counts are stored with the turn, so a turn resumed by another worker keeps them. */
  readonly budget?: Budget;
  /**
   * How long a person has to decide a parked call (ms) of a tool without its own
   * `approvalTimeoutMs`; then the stored turn rejects it as expired (the time is kept in the
   * database). Default: a parked call waits until it is decided.
   */
  readonly approvalTimeoutMs?: number;
  /**
   * The final answer is parsed as JSON and validated by this schema; a failure is sent back for repair (as `runTurn`'s
   * `output`).
   */
  readonly output?: OutputSchema;
  /** A custom check of the final answer (as `runTurn`'s `check`). */
  readonly check?: CheckFn;
  /**
   * Shrinks the conversation between rounds, as `runTurn`'s `compact` does (the same contract: a
   * compaction that parts a tool call from its result fails the turn, and the transcript is left
   * as it was). In a thread the next turns go on from what it kept. The store writes the kept
   * transcript as a log entry; the messages it leaves out stay in the log.
   */
  readonly compact?: CompactFn;
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

/** The options of `createWorker`: the store, the agents it runs by name, and how many turns it runs at once. */
export interface WorkerOptions {
  /** A store from openStore(): the worker uses its lease API. */
  readonly store: Leases;
  /**
   * The agents this worker runs, by the name turns are submitted with; a turn naming another agent is left for a worker
   * that has it.
   */
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

/** A worker from `createWorker`: claims runnable turns from the store and runs them, under leases. */
export interface Worker {
  /** This worker's name in lease rows (`WorkerOptions.id`). */
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
