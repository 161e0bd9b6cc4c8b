// The public types of the dispatcher. Data crossing into the turn (results, parked calls, grants,
// decision records) is plain JSON; hooks and policies are the only functions.

import type { ApprovalDecision, DispatchOutcome, ParkedCall, ToolCall, ToolResult, ToolSpec } from '@turnkit/core';
import type { Cancellation } from './cancellation.js';
import type { ToolDefinition } from './define.js';

/**
 * The turn a dispatch belongs to. Without a signal the calls cannot be cancelled (timeouts still
 * apply). The dispatcher reads it once per method call; a context that throws when read gives
 * every call an error result (`invalid_context`), never a rejection.
 */
export interface DispatchContext {
  readonly turnId: string;
  readonly signal?: AbortSignal;
  /**
   * The same cancellation as `signal`, readable without making an AbortSignal (an interpreter
   * passes both; the dispatcher then reads `signal` only to hand it to a hook, policy or tool).
   */
  readonly cancellation?: Cancellation;
  /**
   * Called once per call as soon as its result is known (denied at once, or when its tool
   * finishes), in completion order; the returned results stay in call order. A streaming
   * interpreter uses it to show parallel results as they arrive. A callback that throws is ignored.
   */
  readonly onResult?: (result: ToolResult) => void;
}

/**
 * The outcome of classifying one call (pipeline stages 1–5). `source` says which rule decided.
 * An `execute` verdict from `classify` carries the validated (and possibly hook-rewritten) input.
 */
export type Verdict =
  | { readonly kind: 'execute'; readonly call: ToolCall; readonly input: unknown; readonly source: string }
  | { readonly kind: 'deny'; readonly result: ToolResult; readonly source: string }
  | { readonly kind: 'needs_approval'; readonly call: ToolCall; readonly reason: string; readonly source: string };

/** A call a person approved, for `execute`; its input is validated before the tool runs. */
export interface ApprovedVerdict {
  readonly kind: 'execute';
  readonly call: ToolCall;
  readonly input: unknown;
}

/** One audit record; every call yields exactly one from `dispatch`, plus one from `recordDecision` if it was parked. */
export interface DecisionRecord {
  readonly callId: string;
  readonly tool: string;
  readonly decision: 'allow' | 'deny' | 'ask' | 'user_approved' | 'user_rejected';
  /** Stable: `rule:deny:<pattern>`, `grant:session`, `readonly`, `hook:<name>`, `policy`, … (see docs/tools.md). */
  readonly source: string;
  readonly reason?: string;
}

/** An "approve and remember" decision, plain JSON so a suspended turn can carry it. */
export type Grant =
  | { readonly scope: 'session' }
  | { readonly scope: 'tool'; readonly tool: string }
  | { readonly scope: 'tool'; readonly pattern: string };

/** Permission patterns (`tool` or `tool:arg=glob[:arg2=glob]`), checked deny → grants → allow → ask. */
export interface Permissions {
  readonly deny?: readonly string[];
  readonly allow?: readonly string[];
  readonly ask?: readonly string[];
}

/** What a policy function says; `undefined` means no opinion (the next stage decides). */
export type PolicyVerdict =
  | { readonly kind: 'allow' }
  | { readonly kind: 'deny'; readonly reason: string }
  | { readonly kind: 'ask'; readonly reason: string }
  | undefined;

/** A call as hooks and policies see it: the validated input and the tool's definition. */
export interface CallInfo {
  readonly call: ToolCall;
  // any: each tool has its own input type; the dispatcher validates with the tool's own schema.
  readonly tool: ToolDefinition<any>;
  readonly input: unknown;
  readonly turnId: string;
  readonly signal: AbortSignal;
}

export type Policy = (call: CallInfo) => PolicyVerdict | Promise<PolicyVerdict>;

/** A before-hook's answer; `undefined` is the same as `{ kind: 'continue' }`. */
export type BeforeHookOutcome =
  | undefined
  | { readonly kind: 'continue' }
  | { readonly kind: 'rewrite'; readonly input: unknown }
  | { readonly kind: 'halt'; readonly output: unknown; readonly isError?: boolean };

/** Runs before policy, after validation. A hook that throws denies the call (fail closed). */
export interface BeforeHook {
  readonly name: string;
  run(call: CallInfo): BeforeHookOutcome | Promise<BeforeHookOutcome>;
}

/** A result before shaping: the output may be any value until stage 9. */
export interface RawResult {
  readonly callId: string;
  readonly name: string;
  readonly output: unknown;
  readonly isError: boolean;
  readonly stop?: { readonly reason: string };
  readonly modelOverride?: string;
}

/** An after-hook's answer: fields to change, or `undefined` to keep the result. */
export type AfterHookOutcome =
  | undefined
  | { readonly output?: unknown; readonly isError?: boolean; readonly stop?: { readonly reason: string } };

/** Runs after every executed call. A hook that throws withholds the output (fail closed). */
export interface AfterHook {
  readonly name: string;
  run(result: RawResult, call: CallInfo): AfterHookOutcome | Promise<AfterHookOutcome>;
}

/** Call-count limits, kept on the dispatcher instance. */
export interface Budget {
  readonly maxCalls?: number;
  readonly perTool?: { readonly [tool: string]: number };
}

/** Executed calls so far (plain JSON, to carry across a suspended turn). */
export interface BudgetUsage {
  readonly total: number;
  readonly perTool: { readonly [tool: string]: number };
}

export interface DispatcherOptions {
  // any: see CallInfo.tool.
  readonly tools: readonly ToolDefinition<any>[];
  readonly hooks?: { readonly before?: readonly BeforeHook[]; readonly after?: readonly AfterHook[] };
  readonly policy?: Policy;
  readonly permissions?: Permissions;
  readonly budget?: Budget;
  /** Restores the counters of a suspended turn (`dispatcher.budgetUsage()`). */
  readonly budgetUsage?: BudgetUsage;
  /** Restores remembered grants (`dispatcher.grants()`). */
  readonly grants?: readonly Grant[];
  /** Tools running at once. Default 8. */
  readonly concurrency?: number;
  /** Default 8000. */
  readonly maxOutputChars?: number;
  /** Default 30000. */
  readonly defaultTimeoutMs?: number;
  /** No one can approve: an `ask` becomes a denial. */
  readonly nonInteractive?: boolean;
  /** Receives every decision record. Must not throw; if it does, the error is ignored. */
  readonly onDecision?: (record: DecisionRecord) => void;
}

/** What `dispatch` returns: core's `DispatchOutcome` (results and parked calls, each in call order). */
export type { DispatchOutcome };

export interface Dispatcher {
  /** The tools as the model sees them, computed once. */
  toolSpecs(): readonly ToolSpec[];
  /** Names of the tools defined with `loopExempt: true`, for core's `limits.loopExemptTools`. */
  loopExemptTools(): readonly string[];
  /** Stages 1–5 for one call. Emits no record and changes no state. Never throws. */
  classify(call: ToolCall, ctx: DispatchContext): Promise<Verdict>;
  /** Stages 6–9 for a classified or approved call. Emits no record. Never throws. */
  execute(verdict: Verdict | ApprovedVerdict, ctx: DispatchContext): Promise<ToolResult>;
  /** The whole pipeline for a batch. Never throws. */
  dispatch(calls: readonly ToolCall[], ctx: DispatchContext): Promise<DispatchOutcome>;
  /** Runs approved calls (core's `execute_approved`): stages 1–4 again, no policy, then 6–9. One result per call, in call order. Never throws. */
  executeApproved(calls: readonly ToolCall[], ctx: DispatchContext): Promise<readonly ToolResult[]>;
  /** Records a person's decision on a parked call and, for `approve` with `remember`, adds the grant. */
  recordDecision(call: ToolCall, decision: ApprovalDecision): void;
  /** Remembers an "approve and remember" decision. Throws a TypeError on a malformed grant. */
  grant(grant: Grant): void;
  grants(): readonly Grant[];
  budgetUsage(): BudgetUsage;
}
