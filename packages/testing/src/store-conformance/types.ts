// The slice of @turnkit/store's API the store conformance suite uses (this package does not depend
// on @turnkit/store), and the suite's options.

import type { ApprovalDecision, Message, Model, ParkedCall, ToolResult, TurnError, TurnState } from '@turnkit/core';
import type { ToolDefinition } from '@turnkit/dispatch';

/** A lease as the suite sees it. */
export interface ConformanceLease {
  readonly id: string;
  readonly token: number;
  version: number;
}

/** The slice of `Store` (from @turnkit/store) the suite uses. */
export interface ConformanceStore {
  submit(options: { readonly agent: string; readonly input?: string; readonly id?: string }): Promise<string>;
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
  list(options?: {
    readonly status?: never;
    readonly limit?: number;
    readonly cursor?: string | null;
  }): Promise<{ readonly turns: readonly { readonly id: string }[]; readonly cursor: string | null }>;
  decide(
    id: string,
    decisions: Record<string, ApprovalDecision>,
  ): Promise<{ readonly accepted: readonly string[]; readonly ignored: readonly string[] }>;
  cancel(id: string, reason?: string): Promise<boolean>;
  watch(id: string, options?: { readonly pollMs?: number }): AsyncIterable<{ readonly type: string; readonly seq: number }>;
  close(): Promise<void>;
  claim(options: { readonly owner: string; readonly leaseMs: number }): Promise<{ readonly lease: ConformanceLease } | null>;
  renew(lease: never, leaseMs: number): Promise<void>;
  commit(lease: never, commit: { readonly state?: never; readonly fail?: TurnError; readonly release?: boolean }): Promise<void>;
  journal(
    lease: never,
    callIds: readonly string[],
  ): Promise<{ readonly results: readonly ToolResult[]; readonly started: readonly string[] }>;
  callStarted(lease: never, call: { readonly id: string; readonly name: string }): Promise<void>;
  callFinished(lease: never, result: ToolResult): Promise<boolean>;
}

export interface ConformanceAgent {
  readonly model: Model;
  // any: each tool has its own input type.
  readonly tools?: readonly ToolDefinition<any>[];
  readonly system?: string;
}

export interface ConformanceWorker {
  runUntilIdle(): Promise<void>;
}

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
