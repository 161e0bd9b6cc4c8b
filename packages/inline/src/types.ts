// The options and results of an in-process turn, and of an agent. Everything a result carries is plain JSON except `trace` entries'
// effects, which are plain JSON too: a suspended result can be written to disk as is.

import type {
  ApprovalDecision,
  Effect,
  JsonValue,
  Message,
  Model,
  Notice,
  Outcome,
  ParkedCall,
  StopReason,
  Trace,
  TraceEntry,
  TurnError,
  TurnLimitsInput,
  TurnState,
  ToolSpec,
} from '@turnkit/core';
import type { CompactInfo, JsonObject, Seal, TurnUsage } from '@turnkit/core/internal';
import type { BeforeHook, AfterHook, Dispatcher, Grant, Permissions, Policy, ToolDefinition } from '@turnkit/dispatch';
import type { BudgetUsage, ExecutionWrapper, NamedPermissions } from '@turnkit/dispatch/internal';

/**
 * One call's answer: a decision, or `{ type: 'await' }` to leave the call parked for a decision
 * from elsewhere (the turn suspends with the awaited calls once every other call is decided).
 */
export type ApprovalAnswer = ApprovalDecision | { readonly type: 'await' };

/** What a call the approve callback leaves out gets: `'expire'` (rejected: `approval expired`) or `'await'`. */
export type UndecidedPolicy = 'expire' | 'await';

/**
 * A person's (or a program's) answer for parked calls, by call id. Each parked call shows the
 * input that runs if approved (`input`). A call left out expires unless `whenUndecided` is `'await'`.
 */
export type ApproveFn = (
  pending: readonly ParkedCall[],
  /** `agentPath`: in a multi-agent turn, the agents from the turn's own to the one whose calls these are. */
  info: { readonly turnId: string; readonly agentPath?: readonly string[] },
) => Record<string, ApprovalAnswer> | Promise<Record<string, ApprovalAnswer>>;

/** What a custom output check says about the final answer. */
export type CheckVerdict = { readonly ok: true; readonly output?: JsonValue } | { readonly ok: false; readonly reason: string };

/**
 * A custom output guard. `output` is the parsed and validated value when an `output` schema is
 * set, else the text itself. A rejection is sent back to the model so it can repair its answer.
 */
export type CheckFn = (candidate: string, output: JsonValue) => CheckVerdict | Promise<CheckVerdict>;

/** Returns the transcript to continue with (for example, the last N messages). */
export type CompactFn = (transcript: readonly Message[], info: CompactInfo) => readonly Message[] | Promise<readonly Message[]>;

/** What `selectTools` is told about the model call it chooses tools for. */
export interface ToolSelectionInfo {
  /** The transcript the model will see (a copy). */
  readonly transcript: readonly Message[];
  /** The round the call belongs to (`request.iteration`: 1 for the first call). */
  readonly iteration: number;
  /** Every tool the dispatcher defines, in its order. */
  readonly tools: readonly ToolSpec[];
  /** The model override of this call, if a tool asked for one. */
  readonly modelOverride?: string;
}

/**
 * Chooses the tools offered to one model call, by name (the tools in `alwaysOffer` are added).
 * Not asked for a forced final call: that call offers no tools.
 */
export type SelectToolsFn = (info: ToolSelectionInfo) => readonly string[];

/** The slice of a zod schema the output check uses (zod stays a dev dependency of this package). */
export interface OutputSchema {
  /** Parses and validates the model's final answer (after `JSON.parse`): zod's `safeParse` is this method. */
  safeParse(value: unknown):
    | { readonly success: true; readonly data: unknown }
    | {
        readonly success: false;
        readonly error: { readonly issues: readonly { readonly path: readonly PropertyKey[]; readonly message: string }[] };
      };
}

/** One transition, as `onStep` and `trace` record it (core's `TraceEntry`). */
export type StepRecord = TraceEntry;

/** Every transition of a run, from `initial` (core's `Trace`; @turnkit/testing's `replay` reads it). */
export type TurnTrace = Trace;

/**
 * The options of `runTurn`: the model, the tools and their rules, the input, and the callbacks that answer approvals
 * and observe the turn. Only `model` is required.
 */
export interface RunTurnOptions {
  /** The model every call goes to: `fromAISDK(…)` for a real one, `scriptedModel(…)` in tests. */
  readonly model: Model;
  /** Tool definitions (a dispatcher is made from them) or a dispatcher from `createDispatcher`. */
  // any: each tool has its own input type.
  readonly tools?: readonly ToolDefinition<any>[] | Dispatcher;
  /** The user's message that starts the turn. Without it the turn starts from `transcript` as it is. */
  readonly input?: string;
  /** Sent first unless the transcript already starts with this system message. */
  readonly system?: string;
  /**
   * This agent's name. Needed when it delegates, hands off or changes model, and for an agent
   * named in `delegates` or `handoffs` (docs/agents.md).
   */
  readonly name?: string;
  /** What this agent is for: an agent that may delegate or hand off to it shows its model this. */
  readonly description?: string;
  /** Agents it may give a task to (`transfer_task`): each task runs as a child turn of that agent. */
  readonly delegates?: readonly NamedAgent[];
  /** Agents it may hand the rest of the turn over to (`handoff`). */
  readonly handoffs?: readonly NamedAgent[];
  /** Models it may switch to for the rest of the turn (`change_model`): model ids, as a tool's `model` names one. */
  readonly models?: readonly string[];
  /** Earlier messages of the conversation. */
  readonly transcript?: readonly Message[];
  /** Rounds, loops, retries and budgets (each field and its default: `TurnLimitsInput`). Default: core's defaults. */
  readonly limits?: TurnLimitsInput;
  /** Passed to `createDispatcher` when `tools` is a list of definitions. */
  readonly policy?: Policy;
  /**
   * Allow, ask and deny rules by tool pattern, or an ordered list of named sets (the first set with a
   * matching rule decides); passed to `createDispatcher` when `tools` is a list of definitions.
   */
  readonly permissions?: Permissions | readonly NamedPermissions[];
  /** Before- and after-hooks around every tool call (passed to `createDispatcher` when `tools` is a list of definitions). */
  readonly hooks?: { readonly before?: readonly BeforeHook[]; readonly after?: readonly AfterHook[] };
  /**
   * The caller's context of the turn (session, user, working directory, …): a JSON object that
   * hooks, policies and audit records see, over the dispatcher's own `context`.
   */
  readonly context?: JsonObject;
  /** Runs around every tool execution (`createDispatcher`'s `wrapExecution`). */
  readonly wrapExecution?: ExecutionWrapper;
  /** Decides parked calls. Without it a turn that needs approval returns `suspended`. */
  readonly approve?: ApproveFn;
  /** What a parked call `approve` leaves out gets: `'expire'` (the default: rejected) or `'await'` (the turn suspends with it). */
  readonly whenUndecided?: UndecidedPolicy;
  /**
   * Decisions known up front, by call id: a call that would wait for approval is decided by its
   * entry without asking `approve` (the dispatcher's `DispatchContext.decisions`).
   */
  readonly decisions?: Record<string, ApprovalDecision>;
  /**
   * Names the session that a person's "approve and remember" grants belong to. Without it they
   * belong to this turn only (and travel with its suspended result).
   */
  readonly session?: string;
  /**
   * Signs a suspended result with this secret (HMAC-SHA-256, at least 32 bytes): the result
   * carries a `seal`, and `resumeTurn` with the same secret refuses a result whose seal is
   * missing or does not verify (an edited state, transcript or grant). See docs/suspend-resume.md.
   */
  readonly sealSecret?: string | Uint8Array;
  /** Passed to `createDispatcher` when `tools` is a list of definitions. */
  readonly defaultDecision?: 'ask' | 'allow';
  /** Passed to `createDispatcher` when `tools` is a list of definitions. */
  readonly yolo?: boolean;
  /** The final text is parsed as JSON and validated; a failure is sent back for repair. */
  readonly output?: OutputSchema;
  /**
   * A custom check of the final answer, after the `output` schema; a rejection goes back to the model for repair (at
   * most `limits.maxOutputRepairs` times). Default: every answer is accepted.
   */
  readonly check?: CheckFn;
  /** Shortens the transcript after each tool round (`keepLastMessages(n)` is one). Default: the transcript is kept whole. */
  readonly compact?: CompactFn;
  /**
   * Which tools each model call is offered: called before every call that may use tools, it
   * returns tool names (unknown names fail the turn with `tool_selection_failed`). Without it
   * every tool is offered. Only the offer changes: a call to a defined tool that was not offered
   * still goes through the dispatcher and its policy.
   */
  readonly selectTools?: SelectToolsFn;
  /** Tools offered to every model call (but a forced final one) whatever `selectTools` returns. */
  readonly alwaysOffer?: readonly string[];
  /**
   * Hears every notice (`notice.name`: `turn_started`, `iteration`, `awaiting_approval`, `model_retry`, `hook_blocked`,
   * …). Errors it throws are ignored.
   */
  readonly onNotice?: (notice: Notice) => void;
  /** Sees every effect, in order, before it is performed. Errors it throws are ignored. */
  readonly onEffect?: (effect: Effect) => void;
  /** Sees every transition. Errors it throws are ignored. */
  readonly onStep?: (record: StepRecord) => void;
  /** Record every transition in `result.trace` (off by default: it keeps every state). */
  readonly trace?: boolean;
  /** Cancels the turn when aborted: the model call and running tools are stopped and the result is `cancelled`. */
  readonly signal?: AbortSignal;
  /** The turn's id (in call records, notices and traces). Default `turn_<random UUID>`. */
  readonly id?: string;
  /**
   * Sets `limits.maxModelRetries` (retries of a model error marked `retryable`, default 2; core
   * decides them). On `resumeTurn` it replaces the saved turn's value. Not together with `limits.maxModelRetries`.
   */
  readonly maxModelRetries?: number;
  /** Sets `limits.modelRetryBackoffMs` (the wait before retry n is `modelRetryBackoffMs * 2 ** (n - 1)`, default 500), as `maxModelRetries` does. */
  readonly modelRetryBackoffMs?: number;
}

/**
 * The options of `resumeTurn`: those of `runTurn` (without `input`) plus what the suspended
 * result carries. A suspended result spreads in as it is, also after a JSON round trip:
 *
 * @example
 * if (result.status === 'suspended') await resumeTurn({ ...result, model, tools, decisions: { call_1: { type: 'approve' } } });
 */
export interface ResumeTurnOptions extends Omit<RunTurnOptions, 'input' | 'output' | 'trace'> {
  /** The `state` of a suspended result (JSON round trips are fine). */
  readonly state: unknown;
  readonly transcript: readonly Message[];
  /** Decisions for the pending calls, by call id (and, up front, for calls that park later in the turn). */
  readonly decisions?: Record<string, ApprovalDecision>;
  /** The seal of a sealed suspended result (what a spread result carries); checked when `sealSecret` is set. */
  readonly seal?: Seal;
  /** Grants of the suspended result, restored into the dispatcher. */
  readonly grants?: readonly Grant[];
  /** Call counts of the suspended result (used when a dispatcher is made from `tools`). */
  readonly budgetUsage?: BudgetUsage;
  /** The child turns' transcripts of the suspended result (a multi-agent turn waiting on a child). */
  readonly childTranscripts?: Readonly<Record<string, readonly Message[]>>;
  /**
   * As for `runTurn`. `null` (the `output` a spread suspended result carries) means no schema, so
   * spread the result first and your options after it: `{ ...result, ...options }`.
   */
  readonly output?: OutputSchema | null;
  /** `true` records this run's transitions. A trace object (what a spread result carries) is ignored. */
  readonly trace?: boolean | TurnTrace;
}

/** How a run of a turn came back: ended (`stopped`, `failed`, `cancelled`) or `suspended` waiting for decisions. */
export type TurnResultStatus = 'stopped' | 'failed' | 'cancelled' | 'suspended';

/** What every result has, and the fields only some statuses set. */
interface TurnResultFields {
  /** How the run came back; narrow on it before reading the fields only some statuses set. */
  readonly status: TurnResultStatus;
  /** The accepted output (parsed JSON with an `output` schema, else the final text); null unless stopped. */
  readonly output: JsonValue;
  /** The content of the last assistant message ('' if none). */
  readonly text: string;
  /** Why a stopped turn stopped (`completed`, `max_iterations`, …); set when `status` is `stopped`. */
  readonly stopReason?: StopReason;
  /** Why a failed turn failed; set when `status` is `failed`. */
  readonly error?: TurnError;
  /** Why a cancelled turn was cancelled. */
  readonly reason?: string;
  /** How the turn ended (core's `Outcome`); set unless suspended. */
  readonly outcome?: Outcome;
  /** What the turn spent: tokens, cost, model calls and tool calls. */
  readonly usage: TurnUsage;
  /** The turn's state (plain JSON): what `resumeTurn` continues from. */
  readonly state: TurnState;
  /** The whole conversation, system message and earlier messages included. */
  readonly transcript: readonly Message[];
  /** Calls waiting for a decision (suspended only); in a multi-agent turn each with its `agentPath`. */
  readonly pending?: readonly ParkedCall[];
  /** The transcripts of the child turns running (suspended only, multi-agent turns), by child turn id. */
  readonly childTranscripts?: Readonly<Record<string, readonly Message[]>>;
  /** Remembered grants, to pass to `resumeTurn` (suspended only). */
  readonly grants?: readonly Grant[];
  /** Tool-call counts for the dispatcher's budgets, to pass to `resumeTurn` (suspended only). */
  readonly budgetUsage?: BudgetUsage;
  /** Set on a suspended result when `sealSecret` was given: record `seal.id` to refuse resuming it twice. */
  readonly seal?: Seal;
  /** Every transition of this run, when `trace: true` was passed. */
  readonly trace?: TurnTrace;
}

/**
 * A turn waiting for decisions on its `pending` calls. Save it (`JSON.stringify`) and pass it to
 * `resumeTurn` as it is: `resumeTurn({ ...result, model, tools, decisions })`.
 */
export interface SuspendedTurnResult extends TurnResultFields {
  /** Always `suspended`. */
  readonly status: 'suspended';
  /** Always `null`: the turn has no answer yet. */
  readonly output: null;
  /** The calls waiting for a decision, each with the input that runs if approved. */
  readonly pending: readonly ParkedCall[];
  /** Remembered grants ("approve always"), to restore on resume. */
  readonly grants: readonly Grant[];
  /** Tool-call counts for the dispatcher's budgets, to restore on resume. */
  readonly budgetUsage: BudgetUsage;
}

/** A turn that ended: stopped, failed or cancelled (`outcome` says how). */
export interface EndedTurnResult extends TurnResultFields {
  /** How the turn ended. */
  readonly status: 'stopped' | 'failed' | 'cancelled';
  /** How the turn ended, with its output, error or cancel reason. */
  readonly outcome: Outcome;
}

/** What `runTurn` and `resumeTurn` return. Narrow on `status` (`'suspended'`) before resuming. */
export type TurnResult = SuspendedTurnResult | EndedTurnResult;

/** What an agent is made of: the options of `runTurn` that stay the same from turn to turn. */
export type AgentOptions = Omit<RunTurnOptions, 'input' | 'transcript' | 'signal' | 'id' | 'trace'>;

/**
 * An agent another may delegate to or hand off to: an agent's options with its `name` and
 * `description`. Its `approve`, observers and `signal` are the turn's (the root's), not its own.
 */
export type NamedAgent = AgentOptions & { readonly name: string; readonly description: string };

/** What may differ from run to run. Given here, `model`, `approve` and the observers replace the agent's. */
export interface AgentRunOptions {
  /** Earlier messages of the conversation. */
  readonly transcript?: readonly Message[];
  /** Cancels this run when aborted (as `runTurn`'s `signal`). */
  readonly signal?: AbortSignal;
  /** This turn's id. Default `turn_<random UUID>`. */
  readonly id?: string;
  /** Record every transition in `result.trace`. */
  readonly trace?: boolean;
  /** Replaces the agent's model for this run. */
  readonly model?: Model;
  /** Replaces the agent's `approve` for this run. */
  readonly approve?: ApproveFn;
  /** Replaces the agent's `onNotice` for this run. */
  readonly onNotice?: (notice: Notice) => void;
  /** Replaces the agent's `onEffect` for this run. */
  readonly onEffect?: (effect: Effect) => void;
  /** Replaces the agent's `onStep` for this run. */
  readonly onStep?: (record: StepRecord) => void;
}

/** The options of `agent.resume`: what the suspended result carries, the decisions, and per-run options. */
export type AgentResumeOptions = Omit<ResumeTurnOptions, keyof AgentOptions> & Omit<AgentRunOptions, 'transcript' | 'trace'>;

/**
 * An agent made by `createAgent`: the options that stay the same from turn to turn, and `run` and `resume` for each
 * turn.
 */
export interface Agent {
  /** Runs one turn on `input`; as `runTurn` with the agent's options. */
  run(input: string, options?: AgentRunOptions): Promise<TurnResult>;
  /** Continues a suspended turn of this agent; as `resumeTurn` with the agent's options. */
  resume(options: AgentResumeOptions): Promise<TurnResult>;
}
