// The public types of the dispatcher. Data crossing into the turn (results, parked calls, grants,
// decision records) is plain JSON; hooks and policies are the only functions.

import type { ApprovalDecision, CallRecord, JsonValue, Message, ToolCall, ToolResult, ToolSpec } from '@turnkit/core';
import type { AgentAction, DispatchOutcome, JsonObject } from '@turnkit/core/internal';
import type { ToolDefinition } from './define.js';
import type { ToolErrorKind } from './errors.js';
import type { RetryPolicy } from './retry.js';

/**
 * The turn a dispatch belongs to. Without a signal the calls cannot be cancelled (timeouts still
 * apply). The dispatcher reads it once per method call; a context that throws when read gives
 * every call an error result (`invalid_context`), never a rejection.
 */
export interface DispatchContext {
  readonly turnId: string;
  /**
   * Names the session a person's "approve and remember" grants belong to. Without it they belong
   * to this turn (`turnId`) alone; a dispatcher shared by many users never lets one user's grant
   * approve another's calls.
   */
  readonly session?: string;
  /**
   * Decisions known up front, by call id: a call that would wait for approval is decided by its
   * entry instead (approved: it runs; rejected: it gets the rejection). Invalid entries are ignored.
   */
  readonly decisions?: { readonly [callId: string]: ApprovalDecision };
  /** Cancels the calls: a running tool's own signal aborts with its reason, and no call starts after it. */
  readonly signal?: AbortSignal;
  /**
   * Called once per call as soon as its result is known (denied at once, or when its tool
   * finishes), in completion order; the returned results stay in call order. A streaming
   * interpreter uses it to show parallel results as they arrive. A callback that throws is ignored.
   */
  readonly onResult?: (result: ToolResult) => void;
  /** Called with each call's audit record, as `onRecord` of the dispatcher is. A callback that throws is ignored. */
  readonly onRecord?: (record: CallRecord) => void;
  /**
   * The caller's context of this turn (session, user, working directory, …): a JSON object that
   * hooks, policies and records see, over the dispatcher's own `context`.
   */
  readonly context?: JsonObject;
  /** The conversation so far, for hooks and policies (they get a frozen copy, made when first read). */
  readonly transcript?: readonly Message[];
}

/**
 * The audit record of one call (core's `CallRecord`): the input that ran, the decision (`allow`,
 * `deny`, `user_approved`) and its source, the outcome (`ok` or the result's `ToolErrorKind`), how
 * long it ran and how many tries it took.
 */
export type { CallRecord };

/**
 * The outcome of classifying one call (pipeline stages 1–5). `source` says which rule decided.
 * An `execute` verdict from `classify` carries the validated (and possibly hook-rewritten) input.
 */
export type Verdict =
  | { readonly kind: 'execute'; readonly call: ToolCall; readonly input: unknown; readonly source: string }
  | { readonly kind: 'deny'; readonly result: ToolResult; readonly source: string }
  | {
      readonly kind: 'needs_approval';
      readonly call: ToolCall;
      /** The input that runs once approved: after the before-hooks, before the schema parses it. */
      readonly input: JsonValue;
      readonly reason: string;
      readonly source: string;
    };

/** A call a person approved, for `execute`; its input is validated before the tool runs. */
export interface ApprovedVerdict {
  readonly kind: 'execute';
  readonly call: ToolCall;
  readonly input: unknown;
}

/** How a parked call ended without a person's answer, for `recordDecision`. */
export type ParkedOutcome =
  /** Nobody decided before the approval expired. */
  | { readonly type: 'expired' }
  /** The approve callback failed (threw, or answered garbage for the whole batch). */
  | { readonly type: 'approve_failed'; readonly reason: string }
  /** The turn was cancelled while the call waited (or after its approval, before it ran). */
  | { readonly type: 'cancelled'; readonly reason?: string };

/**
 * One audit record. Every call gets exactly one final record (any decision but `ask`); a call that
 * parks gets an `ask` record first (see docs/reference/dispatcher.md, "Decision records").
 */
export interface DecisionRecord {
  readonly callId: string;
  readonly tool: string;
  readonly decision: 'allow' | 'deny' | 'ask' | 'user_approved' | 'user_rejected';
  /** Stable: `rule:deny:<pattern>`, `grant:session`, `readonly`, `hook:<name>`, `policy`, … (see docs/reference/dispatcher.md). */
  readonly source: string;
  readonly reason?: string;
}

/** An "approve and remember" decision, plain JSON so a suspended turn can carry it. */
export type Grant =
  | { readonly scope: 'session' }
  | { readonly scope: 'tool'; readonly tool: string }
  | { readonly scope: 'tool'; readonly pattern: string };

/** Where a person's grant lives: the named session, else the turn. */
export interface GrantScope {
  readonly turnId: string;
  readonly session?: string | undefined;
}

/** Permission patterns (`tool` or `tool:arg=glob[:arg2=glob]`), checked deny → grants → allow → ask. */
export interface Permissions {
  /** Patterns whose calls are refused; deny always wins (over grants, allow, hooks and `yolo`). */
  readonly deny?: readonly string[];
  /** Patterns whose calls run without asking. */
  readonly allow?: readonly string[];
  /** Patterns whose calls wait for a person's approval (even a `readOnly` tool's). */
  readonly ask?: readonly string[];
}

/** A named permission set, for layered `permissions` (session first, then team, …). */
export interface NamedPermissions extends Permissions {
  /** Names the set in decision sources: `set:<name>:deny:<pattern>`. */
  readonly name: string;
}

/** What a policy function says; `undefined` means no opinion (the next stage decides). */
export type PolicyVerdict =
  | { readonly kind: 'allow' }
  | { readonly kind: 'deny'; readonly reason: string }
  | { readonly kind: 'ask'; readonly reason: string }
  | undefined;

/** A call as hooks and policies see it: the validated input and the tool's definition. */
export interface CallInfo {
  /** The call as the model sent it. */
  readonly call: ToolCall;
  // any: each tool has its own input type; the dispatcher validates with the tool's own schema.
  /** The called tool's definition. */
  readonly tool: ToolDefinition<any>;
  /** The input, validated by the tool's schema (and rewritten by earlier before-hooks). */
  readonly input: unknown;
  /** The turn the call belongs to. */
  readonly turnId: string;
  /** Aborts when the turn (or the batch) is cancelled. */
  readonly signal: AbortSignal;
  /** The caller's context: the dispatcher's `context` with the dispatch context's over it (`{}` without). */
  readonly context: JsonObject;
  /** A frozen copy of the conversation so far, as the dispatch context gave it (`[]` without). */
  readonly transcript: readonly Message[];
}

/**
 * A function that decides calls no deny rule or grant decided: allow, deny or ask for approval, or `undefined` for no
 * opinion (the next stage decides). Runs after the before-hooks; a policy that throws denies the call.
 */
export type Policy = (call: CallInfo) => PolicyVerdict | Promise<PolicyVerdict>;

/** A before-hook's answer; `undefined` is the same as `{ kind: 'continue' }`. */
export type BeforeHookOutcome =
  | undefined
  | { readonly kind: 'continue' }
  | { readonly kind: 'rewrite'; readonly input: unknown }
  /** Pre-approves the call: it runs without asking a person (deny rules and the policy's deny still win). */
  | { readonly kind: 'approve' }
  | { readonly kind: 'halt'; readonly output: unknown; readonly isError?: boolean };

/** Runs before policy, after validation. A hook that throws denies the call (fail closed). */
export interface BeforeHook {
  /** Names the hook in decision sources (`hook:<name>`) and `hook_blocked` notices. */
  readonly name: string;
  /**
   * Sees a validated call before the policy: continue, rewrite its input, pre-approve it, or halt it with an output of
   * its own.
   */
  run(call: CallInfo): BeforeHookOutcome | Promise<BeforeHookOutcome>;
}

/** A result before shaping: the output may be any value until stage 9. */
export interface RawResult {
  readonly callId: string;
  readonly name: string;
  readonly output: unknown;
  readonly isError: boolean;
  /** Set on an error result; stage 9 makes it `tool_error` when missing. */
  readonly errorKind?: ToolErrorKind;
  readonly stop?: { readonly reason: string };
  readonly modelOverride?: string;
  /** Set on a runtime tool's result (`transfer_task`, `handoff`, `change_model`): what core does once it ran. */
  readonly action?: AgentAction;
}

/** One execution of a tool, as the execution wrapper sees it. */
export interface ToolExecution {
  readonly turnId: string;
  /** As the model sent it (id, name, input). */
  readonly call: ToolCall;
  /** The tool's name. */
  readonly tool: string;
  /** Exactly the input that runs: validated, after the before-hooks. */
  readonly input: unknown;
}

/** How an execution ended, every try included (before after-hooks and shaping). */
export interface ExecutionOutcome {
  readonly isError: boolean;
  readonly output: unknown;
  /** Present when `isError`. */
  readonly errorKind?: ToolErrorKind;
  /** Tries made, the first included (0 when the turn was cancelled before the first). */
  readonly attempts: number;
  readonly durationMs: number;
}

/**
 * Runs around each tool execution (once per executed call, around all its tries). It must call
 * `run()` once; the dispatcher uses run()'s outcome whatever the wrapper returns. A wrapper that
 * throws (or returns) before `run()` fails the call closed (an error result of kind `internal`,
 * the tool does not run); one that throws after `run()` changes nothing. It is awaited, so a
 * tracer can run the tool inside its span's context.
 */
export type ExecutionWrapper = (execution: ToolExecution, run: () => Promise<ExecutionOutcome>) => Promise<unknown>;

/** An after-hook's answer: fields to change, or `undefined` to keep the result. */
export type AfterHookOutcome =
  | undefined
  | { readonly output?: unknown; readonly isError?: boolean; readonly stop?: { readonly reason: string } };

/** Runs after every executed call. A hook that throws withholds the output (fail closed). */
export interface AfterHook {
  /** Names the hook in decision records and errors. */
  readonly name: string;
  /** Sees an executed call's result: change its output or error flag, or ask to end the turn (`stop`). */
  run(result: RawResult, call: CallInfo): AfterHookOutcome | Promise<AfterHookOutcome>;
}

/** Call-count limits, kept on the dispatcher instance. */
export interface Budget {
  /** Executed calls allowed in all, counted on the dispatcher (a suspended turn carries its count in `budgetUsage`). Default no limit. */
  readonly maxCalls?: number;
  /** Executed calls allowed per tool name. Default no limit. */
  readonly perTool?: { readonly [tool: string]: number };
}

/** Executed calls so far (plain JSON, to carry across a suspended turn). */
export interface BudgetUsage {
  readonly total: number;
  readonly perTool: { readonly [tool: string]: number };
}

/**
 * The options of `createDispatcher`: the tools, the rules that decide each call (permissions, hooks, policy), budgets,
 * timeouts and observers. Only `tools` is required.
 */
export interface DispatcherOptions {
  // any: see CallInfo.tool.
  /** The tools, from `defineTool`; names must be unique. */
  readonly tools: readonly ToolDefinition<any>[];
  /** Before-hooks (after validation, before the policy) and after-hooks (after execution), run in order. */
  readonly hooks?: { readonly before?: readonly BeforeHook[]; readonly after?: readonly AfterHook[] };
  /** Decides calls the permission rules left undecided (see `Policy`). Default none. */
  readonly policy?: Policy;
  /**
   * One set of patterns, or an ordered list of named sets: the first set with a rule that matches
   * the call decides (its deny, else a grant, else its allow, else its ask).
   */
  readonly permissions?: Permissions | readonly NamedPermissions[];
  /**
   * What a call no rule, policy or needsApproval decided gets: `'ask'` (the default: a tool that is
   * not `readOnly` needs a person's approval or an allow rule) or `'allow'`.
   */
  readonly defaultDecision?: 'ask' | 'allow';
  /** Every ask becomes an allow (source `yolo`). Deny rules, the policy's denials and hooks still apply. */
  readonly yolo?: boolean;
  /** Call-count limits; a call past one gets a `budget` error result. Default none. */
  readonly budget?: Budget;
  /** Restores the counters of a suspended turn (`dispatcher.budgetUsage()`). */
  readonly budgetUsage?: BudgetUsage;
  /** Restores remembered grants (`dispatcher.grants()`). */
  readonly grants?: readonly Grant[];
  /** Tools running at once. Default 8. */
  readonly concurrency?: number;
  /**
   * Longest tool output the model sees, in characters: a longer string (or the JSON text of a
   * longer array or object) is cut to it and ends with `…[truncated N chars]`. Default 8000.
   */
  readonly maxOutputChars?: number;
  /**
   * Deadline of a call (every try included) for a tool without its own `timeoutMs`, in ms; a late
   * call gets a `timeout` error result. Default 30000.
   */
  readonly defaultTimeoutMs?: number;
  /**
   * How long a person has to decide a parked call (ms) of a tool without its own
   * `approvalTimeoutMs`: a parked call carries it as `expiresAfterMs`, and an interpreter that keeps
   * time (a store's worker) rejects the call as expired when it falls due. Default: no limit.
   */
  readonly approvalTimeoutMs?: number;
  /** No one can approve: an `ask` becomes a denial. */
  readonly nonInteractive?: boolean;
  /** Receives every decision record. Must not throw; if it does, the error is ignored. */
  readonly onDecision?: (record: DecisionRecord) => void;
  /** Runs around every tool execution (timing, tracing spans); see `ExecutionWrapper`. */
  readonly wrapExecution?: ExecutionWrapper;
  /**
   * Retries by error kind for every tool (a tool's own `retryPolicy` wins). Default: `transient`
   * 3 tries from 200 ms, `rate_limited` 3 tries from 1000 ms (or its `retryAfterMs`), nothing else.
   */
  readonly retryPolicy?: RetryPolicy;
  /** Receives the audit record of every call that got a result from `dispatch` or `executeApproved`. Errors it throws are ignored. */
  readonly onRecord?: (record: CallRecord) => void;
  /** A context every call of this dispatcher carries (session, user, working directory, …): a JSON object. */
  readonly context?: JsonObject;
  /**
   * Coerce an input that fails validation towards its tool's schema (`"42"` → 42 for a number,
   * `"true"` → true for a boolean) and validate it again. Off by default; a tool's own `coerce` wins.
   */
  readonly coerce?: boolean;
}

/**
 * What `dispatch` returns: core's `DispatchOutcome` (results and parked calls, each in call
 * order). The dispatcher sets every parked call's `input`: what runs if it is approved.
 */
export type { DispatchOutcome };

/**
 * The tool-call chokepoint `createDispatcher` returns: every call passes validate → hooks → policy → budget → execute →
 * after-hooks here. Interpreters call `dispatch` and `executeApproved`; the other methods serve interpreters and tools
 * built on it.
 */
export interface Dispatcher {
  /** The tools as the model sees them, computed once. */
  toolSpecs(): readonly ToolSpec[];
  /** True when a tool of this exact name is defined. */
  has(name: string): boolean;
  /** The tool of this exact name, or undefined. */
  // any: see CallInfo.tool.
  get(name: string): ToolDefinition<any> | undefined;
  /** Every tool, sorted by name. */
  list(): readonly ToolDefinition<any>[];
  /** Names of the tools defined with `loopExempt: true`, for core's `limits.loopExemptTools`. */
  loopExemptTools(): readonly string[];
  /** Stages 1–5 for one call. Emits no record and changes no state. Never throws. */
  classify(call: ToolCall, ctx: DispatchContext): Promise<Verdict>;
  /** Stages 6–9 for a classified or approved call. Emits no record. Never throws. */
  execute(verdict: Verdict | ApprovedVerdict, ctx: DispatchContext): Promise<ToolResult>;
  /** The whole pipeline for a batch. Never throws. */
  dispatch(calls: readonly ToolCall[], ctx: DispatchContext): Promise<DispatchOutcome>;
  /**
   * Runs approved calls (core's `execute_approved`, each with the input it parked with): stages
   * 1–3 again, no hooks, then the deny rules in force now (deny always wins), then 6–9. One
   * result and one final decision record per call, in call order. Never throws.
   */
  executeApproved(calls: readonly ToolCall[], ctx: DispatchContext): Promise<readonly ToolResult[]>;
  /**
   * Records how a parked call was decided. A rejection or a `ParkedOutcome` emits the call's final
   * record now; an approval emits it when the call reaches `executeApproved`, and with `remember`
   * adds the grant to the turn of `ctx` (or its `session`). A grant whose turn was cancelled is
   * dropped. Throws a TypeError on a malformed decision.
   */
  recordDecision(call: ToolCall, decision: ApprovalDecision | ParkedOutcome, ctx?: DispatchContext): void;
  /**
   * Remembers an "approve and remember" decision for the turn (or session) of `scope`; without a
   * scope, for every turn of this dispatcher. Throws a TypeError on a malformed grant.
   */
  grant(grant: Grant, scope?: GrantScope): void;
  /** The grants of the turn (or session) of `scope`, or without one those for every turn. */
  grants(scope?: GrantScope): readonly Grant[];
  /** Executed calls so far, total and per tool: pass it back as `budgetUsage` when a suspended turn resumes. */
  budgetUsage(): BudgetUsage;
}
