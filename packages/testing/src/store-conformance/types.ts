// The slice of @turnkit/store's API the store conformance suite uses (this package does not depend
// on @turnkit/store), and the suite's options.

import type { ApprovalDecision, Message, Model, ParkedCall, ToolResult, TurnError, TurnState } from '@turnkit/core';
import type { ToolDefinition } from '@turnkit/dispatch';

/** A lease as the suite sees it. */
export interface ConformanceLease {
  /** The leased turn's id. */
  readonly id: string;
  /** The fencing token: a write under an older token is refused. */
  readonly token: number;
  /** The turn's row version: each write under the lease moves it forward (compare-and-swap). */
  version: number;
}

/** The slice of `Store` (from @turnkit/store) the suite uses. */
export interface ConformanceStore {
  /** `Store.submit`: queues a turn. */
  submit(options: { readonly agent: string; readonly input?: string; readonly id?: string }): Promise<string>;
  /** `Store.get`: the stored turn, or null. */
  get(id: string): Promise<{
    readonly status: string;
    readonly state: TurnState | null;
    readonly transcript: readonly Message[];
    readonly parked: readonly ParkedCall[];
    readonly decisions: readonly { readonly callId: string | null; readonly status: string; readonly kind: string }[];
    readonly toolCalls: readonly {
      readonly callId: string;
      readonly result: ToolResult | null;
      readonly startedAt: string | null;
    }[];
    readonly error: TurnError | null;
  } | null>;
  /** `Store.list`: turns a page at a time. */
  list(options?: {
    readonly status?: never;
    readonly limit?: number;
    readonly cursor?: string | null;
  }): Promise<{ readonly turns: readonly { readonly id: string }[]; readonly cursor: string | null }>;
  /** `Store.decide`: decisions for parked calls. */
  decide(
    id: string,
    decisions: Record<string, ApprovalDecision>,
  ): Promise<{ readonly accepted: readonly string[]; readonly ignored: readonly string[] }>;
  /** `Store.cancel`: asks for the turn to be cancelled. */
  cancel(id: string, reason?: string): Promise<boolean>;
  /** `Store.watch`: the turn's events as they are written. */
  watch(id: string, options?: { readonly pollMs?: number }): AsyncIterable<{ readonly type: string; readonly seq: number }>;
  /** `Store.close`: closes the connection. */
  close(): Promise<void>;
  /** `Store.claim`: leases the oldest runnable turn. */
  claim(options: { readonly owner: string; readonly leaseMs: number }): Promise<{ readonly lease: ConformanceLease } | null>;
  /** `Store.renew`: extends a lease. */
  renew(lease: never, leaseMs: number): Promise<void>;
  /** `Store.commit`: a fenced write of the turn's state (or its failure). */
  commit(lease: never, commit: { readonly state?: never; readonly fail?: TurnError; readonly release?: boolean }): Promise<void>;
  /** `Store.journal`: what the tool journal knows of these calls. */
  journal(
    lease: never,
    callIds: readonly string[],
  ): Promise<{ readonly results: readonly ToolResult[]; readonly started: readonly string[] }>;
  /** `Store.callStarted`: journals that a call is about to run. */
  callStarted(lease: never, call: { readonly id: string; readonly name: string }): Promise<void>;
  /** `Store.callFinished`: journals a call's result (the first one wins). */
  callFinished(lease: never, result: ToolResult): Promise<boolean>;
}

/** An agent as the suite registers it with a worker (the slice of the store's `AgentDefinition` it uses). */
export interface ConformanceAgent {
  /** The agent's (scripted) model. */
  readonly model: Model;
  // any: each tool has its own input type.
  /** The agent's tools. */
  readonly tools?: readonly ToolDefinition<any>[];
  /** The agent's system prompt. */
  readonly system?: string;
}

/** A worker as the suite drives it. */
export interface ConformanceWorker {
  /** Runs turns until none is runnable, then resolves. */
  runUntilIdle(): Promise<void>;
}

/**
 * The options of `storeConformance`: the store under test comes from its factory argument; these name the suite and
 * make its workers.
 */
export interface StoreConformanceOptions<S extends ConformanceStore> {
  /** Shown in the describe block's name. */
  readonly name: string;
  /** `createWorker` from @turnkit/store (or a compatible worker). */
  readonly createWorker: (options: {
    readonly store: S;
    readonly agents: Record<string, ConformanceAgent>;
    readonly leaseMs?: number;
    readonly onError?: (error: unknown) => void;
  }) => ConformanceWorker;
  /** Skip the whole suite, saying why (the reason is in the describe block's name). */
  readonly skip?: string | false;
  /** Called once after the suite, with the store closed (drop a scratch schema, say). */
  readonly cleanup?: () => Promise<void>;
}
