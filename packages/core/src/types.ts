// The data of a turn: plain JSON only (no functions, classes, Dates or Maps), so a state, an
// event or an effect can be compared with deep equality, written to disk and read back.
// The shapes are described in docs/turn-contract.md.

export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };
export type JsonObject = { readonly [key: string]: JsonValue };

/**
 * A tool call as the model asked for it. `inputError` set: the arguments were not valid JSON and
 * `input` holds the raw text.
 *
 * In a turn's state, transcript and effects, `id` is unique within the turn: core keeps the
 * model's id when it is new and gives a derived one (`<id>~<n>`) when the model repeated an id of
 * the same reply or of an earlier round, or sent none; `originalId` then keeps the model's own id
 * (absent when it sent none). Results, decisions, journals and every other record of a call are
 * keyed by `id` (docs/turn-contract.md, "Call identity").
 */
export interface ToolCall {
  readonly id: string;
  readonly name: string;
  readonly input: JsonValue;
  readonly inputError?: string;
  /** The id the model gave, when core had to give the call another one. */
  readonly originalId?: string;
}

/** A tool call as loop detection sees it: the id does not matter. */
export interface BatchCall {
  readonly name: string;
  readonly input: JsonValue;
}

export interface ToolResult {
  readonly callId: string;
  readonly name: string;
  readonly output: JsonValue;
  readonly isError: boolean;
  /**
   * What kind of failure an error result reports (`invalid_input`, `denied`, `timeout`, `budget`, …;
   * @turnkit/dispatch lists them). Optional: results written before it existed have none.
   */
  readonly errorKind?: string;
  /** An after-hook asked to end the turn. */
  readonly stop?: { readonly reason: string };
  /** Use this model for the next model call only. */
  readonly modelOverride?: string;
  /**
   * Set by a runtime tool of a multi-agent turn (`transfer_task`, `handoff`, `change_model` of
   * @turnkit/dispatch): what core changes once the call has run (docs/agents.md).
   */
  readonly action?: AgentAction;
}

/**
 * What a runtime tool's call asks core to do once it has run (its result's `action`):
 * - `transfer`: run a child turn of `agent` on `task`; its end is the call's result.
 * - `handoff`: `agent` is the active agent for the rest of the turn (its `system` prompt is
 *   appended, its limits apply where stricter).
 * - `change_model`: `model` serves the rest of the turn's model calls.
 */
export type AgentAction =
  | { readonly type: 'transfer'; readonly agent: string; readonly task: string; readonly limits: TurnLimitsInput }
  | {
      readonly type: 'handoff';
      readonly agent: string;
      readonly system?: string;
      readonly limits: TurnLimitsInput;
    }
  | { readonly type: 'change_model'; readonly model: string };

/**
 * The audit record of one tool call, as a dispatcher reports it (@turnkit/dispatch's
 * `CallRecord`). The events that report tool results may carry them (`records`), so a trace keeps
 * them beside the results; core reads them only to emit `hook_blocked` notices.
 */
export interface CallRecord {
  readonly turnId: string;
  readonly callId: string;
  readonly tool: string;
  /** The input that ran (validated, after the before-hooks); for a call that did not run, as sent. */
  readonly input: JsonValue;
  /** `allow`, `deny`, `user_approved`, `user_rejected`. */
  readonly decision: string;
  /** What decided: `rule:deny:<pattern>`, `hook:<name>`, `policy`, `user`, … */
  readonly source: string;
  /** `ok`, or the error kind of the result (`denied`, `timeout`, …). */
  readonly outcome: string;
  readonly durationMs: number;
  /** Tries made; 0 for a call that did not run. */
  readonly attempts: number;
  /** Why, for a call that did not run (the start of its result's text). */
  readonly reason?: string;
  /** The caller-supplied context of the turn (session, user, working directory, …). */
  readonly context?: JsonObject;
}

export interface Usage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  readonly cost: number;
}

export type Message =
  | { readonly role: 'system'; readonly content: string }
  | { readonly role: 'user'; readonly content: string }
  | { readonly role: 'assistant'; readonly content: string; readonly toolCalls: readonly ToolCall[]; readonly reasoning?: string }
  | { readonly role: 'tool'; readonly result: ToolResult };

export interface ModelResponse {
  readonly text: string;
  readonly toolCalls: readonly ToolCall[];
  readonly reasoning?: string;
  readonly usage?: Partial<Usage>;
  readonly finishReason?: string;
  readonly modelId?: string;
}

export interface TurnError {
  readonly kind: string;
  readonly message: string;
  readonly retryable?: boolean;
  readonly data?: JsonValue;
}

export type ApprovalDecision =
  | { readonly type: 'approve'; readonly remember?: 'session' | 'tool' }
  | { readonly type: 'reject'; readonly reason?: string };

/** A decision core took for a parked call (`decisionsTaken`): what an interpreter records. */
export interface TakenDecision {
  /** The parked call, as the model sent it (with its turn id). */
  readonly call: ToolCall;
  /** The input that runs if it is approved (`ParkedCall.input`). */
  readonly input: JsonValue;
  readonly decision: ApprovalDecision;
  /** Nobody decided before the approval expired: core rejected it (`approval_expired`). */
  readonly expired?: true;
}

export interface ParkedCall {
  /** The call as the model sent it. */
  readonly call: ToolCall;
  /**
   * The input that runs if the call is approved: what the dispatcher's before-hooks left (the
   * call's own input when none rewrote it). Show this one to the person deciding. Always set in a
   * state; a `tools_parked` event without it parks the call's own input.
   */
  readonly input?: JsonValue;
  readonly reason?: string;
  /** How long a person has to decide, in ms (the tool's or the dispatcher's `approvalTimeoutMs`). */
  readonly expiresAfterMs?: number;
  /**
   * When the approval expires (epoch ms): the parking event's `at` plus `expiresAfterMs`, set by
   * core. An `approval_expired { now }` at or past it rejects the call as expired.
   */
  readonly expiresAt?: number;
  /**
   * The agents from the turn's own down to the one whose call this is (`['supervisor',
   * 'researcher']`), on a call `undecided` reports from a child turn. Never in a state.
   */
  readonly agentPath?: readonly string[];
}

export type StopReason = 'completed' | 'max_iterations' | 'loop_detected' | 'budget_exhausted' | 'hook_stopped';

export type Outcome =
  | { readonly status: 'stopped'; readonly stopReason: StopReason; readonly output: JsonValue }
  | { readonly status: 'failed'; readonly error: TurnError }
  | { readonly status: 'cancelled'; readonly reason: string };

// ---------------------------------------------------------------------------------------------
// Limits and state

export interface TurnBudget {
  readonly maxModelCalls?: number;
  readonly maxToolCalls?: number;
  readonly maxInputTokens?: number;
  readonly maxOutputTokens?: number;
  readonly maxTotalTokens?: number;
  readonly maxCost?: number;
}

export interface TurnLimits {
  /** Tool rounds before a forced final answer (tools disabled). Default 10. */
  readonly maxIterations: number;
  /** Identical batches in a row that count as a loop. Default 5; 0 disables. */
  readonly loopThreshold: number;
  /** Tools whose calls neither count towards nor reset loop detection. */
  readonly loopExemptTools: readonly string[];
  /** Times a rejected final output is sent back to the model for repair. Default 2. */
  readonly maxOutputRepairs: number;
  /**
   * Tool calls of one model reply that may run. Default 32. The calls past it are not executed:
   * each gets an error result saying why.
   */
  readonly maxCallsPerReply: number;
  /**
   * Retries of a failed model call whose error says `retryable: true`. Default 2. Each retry is a
   * model call: it counts in `usage.modelCalls` and must fit `budget.maxModelCalls`.
   */
  readonly maxModelRetries: number;
  /**
   * The wait before retry n is `modelRetryBackoffMs * 2 ** (n - 1)` ms, or the provider's
   * `error.data.retryAfterMs` when that is longer; never more than 60 s. Default 500.
   */
  readonly modelRetryBackoffMs: number;
  /**
   * Times a detected loop is answered with a nudge instead of a forced final answer: the repeated
   * batch is skipped, the model is told it is repeating itself, and it keeps its tools. Default 0.
   */
  readonly loopRecoveries: number;
  readonly budget: TurnBudget;
}

export interface TurnLimitsInput {
  readonly maxIterations?: number;
  readonly loopThreshold?: number;
  readonly loopExemptTools?: readonly string[];
  readonly maxOutputRepairs?: number;
  readonly maxCallsPerReply?: number;
  readonly maxModelRetries?: number;
  readonly modelRetryBackoffMs?: number;
  readonly loopRecoveries?: number;
  readonly budget?: TurnBudget;
}

/** How an interpreter resumes a stored state (`resume`'s second argument). */
export interface ResumeOptions {
  /** Results the interpreter kept of the batch in flight (without `durable`: a call without one is `interrupted`). */
  readonly completed?: readonly ToolResult[];
  /** The interpreter keeps a journal of tool calls and a log of the turn: the batch in flight is issued again for the journal to answer. */
  readonly durable?: boolean;
  /** A cancel that arrived while the turn was stored (its reason): the turn is cancelled first. */
  readonly cancel?: string;
  /** A retry's wait was spent elsewhere (in a database): the re-issued model call has no `delayMs`. */
  readonly retryWaited?: boolean;
  /** The input of a turn still `ready` (it is started). */
  readonly input?: string;
}

export interface TurnOptions {
  readonly id: string;
  readonly limits?: TurnLimitsInput;
  /** The agent's name, for a turn whose agent may delegate, hand off or change model (docs/agents.md). */
  readonly agent?: string;
}

export type TurnStatus =
  | 'ready'
  | 'calling_model'
  | 'dispatching'
  | 'awaiting_approval'
  | 'executing_approved'
  | 'delegating'
  | 'steering'
  | 'finalizing'
  | 'stopped'
  | 'failed'
  | 'cancelled';

export type TerminalStatus = 'stopped' | 'failed' | 'cancelled';

/** What a turn has spent so far. */
export interface TurnUsage extends Usage {
  /** Model calls issued (a resumed call counts again). */
  readonly modelCalls: number;
  /** Tool calls sent to dispatch (calls skipped as a loop or not executed are not counted). */
  readonly toolCalls: number;
}

/** Why the next model call is a forced final one (tools disabled). */
export type ForcedReason = 'max_iterations' | 'loop_detected';

export interface CallLlmRequest {
  readonly iteration: number;
  /** Tools disabled: the model must answer in text. */
  readonly final: boolean;
  readonly modelOverride?: string;
  /** Set on a retry of a failed model call: the retry's number (1 for the first retry). */
  readonly attempt?: number;
  /** Set on a retry: how long (ms) the interpreter waits before making the call (cancellable). */
  readonly delayMs?: number;
}

/** The tool batch in flight (`TurnState.batch`). */
export interface TurnBatch {
  /** The calls of the reply sent to `dispatch_tools`, in call order. */
  readonly calls: readonly ToolCall[];
  /**
   * Synthesised `not executed` results for the calls of the reply that core did not send (past
   * `maxCallsPerReply` or the tool-call budget), appended after the batch's own results.
   */
  readonly notExecuted: readonly ToolResult[];
  /** Results that were ready when the batch parked, waiting for the parked calls. Empty until it parks. */
  readonly held: readonly ToolResult[];
  /** Calls waiting for a human decision, as they were sent, each with the input that runs if approved. Empty until the batch parks. */
  readonly parked: readonly ParkedCall[];
  /**
   * Decisions so far, by call id (first decision per call wins). In `executing_approved` every
   * parked call has one, and the approved calls are the ones running.
   */
  readonly decisions: { readonly [callId: string]: ApprovalDecision };
}

export interface TurnState {
  readonly version: number;
  readonly id: string;
  readonly status: TurnStatus;
  readonly limits: TurnLimits;
  /** Tool rounds applied (a batch skipped as a loop does not count). */
  readonly round: number;
  readonly usage: TurnUsage;
  readonly forced: ForcedReason | null;
  /**
   * The tool batch in flight: set in `dispatching`, `awaiting_approval` and `executing_approved`,
   * `null` in every other status. Everything about one batch lives here, so ending a batch is
   * `batch: null`.
   */
  readonly batch: TurnBatch | null;
  /** Name and input of each counted call of the last batch that counted for loop detection. */
  readonly lastBatch: readonly BatchCall[] | null;
  /** Identical non-exempt batches in a row, ending with the last one. */
  readonly repeats: number;
  readonly repairs: number;
  /** Loop recoveries used (`limits.loopRecoveries`): loops answered with a nudge instead of a forced final call. */
  readonly recoveries: number;
  /** The final text waiting for check_output. */
  readonly candidate: string | null;
  /** The one-shot model override for the next model call. */
  readonly nextModel: string | null;
  readonly lastRequest: CallLlmRequest | null;
  readonly outcome: Outcome | null;
  /** What core keeps to give every call of the turn its own id (see `ToolCall` and `CallIds`). */
  readonly callIds: CallIds;
  /** The agents of a multi-agent turn (the active one, its model, the child turn running), else null. */
  readonly agents: TurnAgents | null;
}

/** A `transfer_task` call of the batch in flight, waiting for (or running) its child turn. */
export interface Delegation {
  readonly callId: string;
  readonly agent: string;
  readonly task: string;
  /** The child agent's own limits; the parent's remaining budget applies over them. */
  readonly limits: TurnLimitsInput;
}

/** `TurnState.agents`: who is active in a multi-agent turn, and the child turn it waits for. */
export interface TurnAgents {
  /** The active agent's name: the one the turn started with, or the last handoff's. */
  readonly agent: string;
  /** The model `change_model` chose for the rest of the turn; null: the active agent's own. */
  readonly model: string | null;
  /** In `delegating`: the `transfer_task` calls still waiting for their child turn, in call order (the first one runs). */
  readonly delegations: readonly Delegation[];
  /** In `delegating`: the child turn of `delegations[0]`, never terminal; else null. */
  readonly child: TurnState | null;
}

/**
 * The call ids of a turn so far, in a fixed size: how many calls it has had, and a Bloom filter of
 * the model ids it kept (base64, empty before the first call). docs/turn-contract.md, "Call identity".
 */
export interface CallIds {
  readonly count: number;
  readonly filter: string;
}

// ---------------------------------------------------------------------------------------------
// Events: facts that happened, fed to step by an interpreter.

export type TurnEvent =
  | { readonly type: 'start'; readonly input?: string }
  | { readonly type: 'model_responded'; readonly response: ModelResponse }
  /**
   * The model call failed. `partialOutput: true` says part of the reply already reached a reader
   * (a stream): core never retries such a call, since a retry would send that output again.
   */
  | { readonly type: 'model_failed'; readonly error: TurnError; readonly partialOutput?: boolean }
  | { readonly type: 'tools_completed'; readonly results: readonly ToolResult[]; readonly records?: readonly CallRecord[] }
  | {
      readonly type: 'tools_parked';
      readonly held: readonly ToolResult[];
      readonly parked: readonly ParkedCall[];
      readonly records?: readonly CallRecord[];
      /** The interpreter's clock when the batch parked (epoch ms): a parked call's `expiresAt` counts from it. */
      readonly at?: number;
    }
  | { readonly type: 'approvals_decided'; readonly decisions: { readonly [callId: string]: ApprovalDecision } }
  /**
   * Nobody decided in time. Without `now`, every undecided parked call expires; with `now` (the
   * interpreter's clock, epoch ms), those whose `expiresAt` is at or before it.
   */
  | { readonly type: 'approval_expired'; readonly now?: number }
  | {
      readonly type: 'approved_tools_completed';
      readonly results: readonly ToolResult[];
      readonly records?: readonly CallRecord[];
    }
  | { readonly type: 'compacted'; readonly info?: JsonValue }
  | { readonly type: 'output_accepted'; readonly output: JsonValue }
  | { readonly type: 'output_rejected'; readonly reason: string }
  | { readonly type: 'cancel'; readonly reason?: string }
  /**
   * Cancel the tool batch in flight, not the turn: its open calls get `cancelled: …` results and
   * the turn goes on to the next model call, which sees them. The interpreter stops the batch's
   * tools and drops whatever they report afterwards.
   */
  | { readonly type: 'cancel_batch'; readonly reason?: string }
  /**
   * The interpreter could not perform a blocking effect: its compact or check_output function
   * broke (threw, or returned garbage), or the tool dispatcher itself threw. Core writes an error
   * result for every call in flight and fails the turn with `error`.
   */
  | { readonly type: 'effect_failed'; readonly effect: FailableEffect; readonly error: TurnError }
  /** An event for the child turn of the `transfer_task` call `callId` (the answer to a `child` effect). */
  | { readonly type: 'child'; readonly callId: string; readonly event: TurnEvent };

/** The blocking effects an interpreter reports with `effect_failed` when it cannot perform them. */
export type FailableEffect = 'compact' | 'check_output' | 'dispatch_tools' | 'execute_approved';

export type TurnEventType = TurnEvent['type'];

// ---------------------------------------------------------------------------------------------
// Effects: commands for an interpreter.

export type NoticeName =
  | 'turn_started'
  | 'iteration'
  | 'steering'
  | 'awaiting_approval'
  | 'limit_reached'
  | 'ignored_event'
  | 'model_retry'
  /** A before-hook refused a call: `{ callId, tool, hook, reason }`. */
  | 'hook_blocked';

export interface Notice {
  readonly name: NoticeName;
  readonly data: JsonValue;
}

export type Checkpoint = 'dispatching' | 'parked' | 'boundary';

export interface CompactInfo {
  readonly round: number;
  readonly usage: TurnUsage;
}

export type Effect =
  // Non-blocking, performed in order.
  | { readonly type: 'append'; readonly message: Message }
  | { readonly type: 'emit'; readonly notice: Notice }
  | { readonly type: 'persist'; readonly checkpoint: Checkpoint }
  // Blocking: at most one per list, always last.
  // `agent`: in a multi-agent turn, the active agent whose model or tools serve the effect.
  | { readonly type: 'call_llm'; readonly request: CallLlmRequest; readonly agent?: string }
  | { readonly type: 'dispatch_tools'; readonly calls: readonly ToolCall[]; readonly agent?: string }
  /** The approved calls, in parked order, each with the input it parked with (`ParkedCall.input`). */
  | { readonly type: 'execute_approved'; readonly calls: readonly ToolCall[]; readonly agent?: string }
  | { readonly type: 'compact'; readonly info: CompactInfo }
  | { readonly type: 'check_output'; readonly candidate: string }
  | { readonly type: 'done'; readonly outcome: Outcome }
  /**
   * An effect of the child turn of the `transfer_task` call `callId` (agent `agent`): performed for
   * that child, and blocking when `effect` is, but for `done` (the child's end is the parent's news).
   */
  | { readonly type: 'child'; readonly callId: string; readonly agent: string; readonly effect: Effect };

export type EffectType = Effect['type'];
export type BlockingEffect = Extract<
  Effect,
  { type: 'call_llm' | 'dispatch_tools' | 'execute_approved' | 'compact' | 'check_output' | 'done' | 'child' }
>;

// ---------------------------------------------------------------------------------------------
// The model interface every interpreter talks to (types only; adapters live elsewhere).

export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the tool's input. */
  readonly inputSchema: JsonObject;
}

export interface ModelRequest {
  readonly messages: readonly Message[];
  /** Empty for a forced final call. */
  readonly tools: readonly ToolSpec[];
  /** 'none' for a forced final call. */
  readonly toolChoice: 'auto' | 'none';
  readonly modelOverride?: string;
  readonly iteration: number;
}

export type ModelStreamPart =
  | { readonly type: 'text_delta'; readonly text: string }
  | { readonly type: 'reasoning_delta'; readonly text: string }
  | { readonly type: 'tool_call_start'; readonly id: string; readonly name: string }
  | { readonly type: 'tool_call_delta'; readonly id: string; readonly argsText: string }
  | { readonly type: 'tool_call_end'; readonly id: string }
  | { readonly type: 'finish'; readonly usage?: Partial<Usage>; readonly finishReason?: string; readonly modelId?: string };

export interface ModelCallOptions {
  readonly signal: AbortSignal;
}

export interface Model {
  generate(request: ModelRequest, options: ModelCallOptions): Promise<ModelResponse>;
  stream?(request: ModelRequest, options: ModelCallOptions): AsyncIterable<ModelStreamPart>;
}

// ---------------------------------------------------------------------------------------------
// Traces: what an interpreter records when asked (plain JSON; `replay` in @turnkit/testing reads it).

/** One transition: the event fed, the state after it, and the effects it produced. */
export interface TraceEntry {
  readonly event: TurnEvent;
  readonly state: TurnState;
  readonly effects: readonly Effect[];
}

/** Every transition of a run, from `initial` (a resumed run starts from its persisted state). */
export interface Trace {
  readonly initial: TurnState;
  readonly entries: readonly TraceEntry[];
}
