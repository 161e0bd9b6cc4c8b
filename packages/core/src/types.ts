// The data of a turn: plain JSON only (no functions, classes, Dates or Maps), so a state, an
// event or an effect can be compared with deep equality, written to disk and read back.
// The shapes are described in docs/turn-contract.md.

/** Any JSON value: what tool inputs and outputs, notices, outputs and saved states are made of. */
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
  /** The call's id, unique within the turn (see above). */
  readonly id: string;
  /** The tool the model called. */
  readonly name: string;
  /** The arguments, parsed from the model's JSON (the raw text when `inputError` is set). */
  readonly input: JsonValue;
  /**
   * Why the arguments could not be parsed as JSON; the dispatcher answers such a call with an `invalid_input` error
   * result.
   */
  readonly inputError?: string;
  /** The id the model gave, when core had to give the call another one. */
  readonly originalId?: string;
}

/** A tool call as loop detection sees it: the id does not matter. */
export interface BatchCall {
  readonly name: string;
  readonly input: JsonValue;
}

/** The result of one tool call, as the model sees it in the transcript. */
export interface ToolResult {
  /** The id of the call it answers (`ToolCall.id`). */
  readonly callId: string;
  /** The tool's name. */
  readonly name: string;
  /** What the tool returned, or for an error result the error's text. */
  readonly output: JsonValue;
  /** The call failed, was denied, rejected, timed out or was not executed; `errorKind` says which. */
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
  /** The turn the call belongs to. */
  readonly turnId: string;
  /** The call's id (`ToolCall.id`). */
  readonly callId: string;
  /** The tool's name. */
  readonly tool: string;
  /** The input that ran (validated, after the before-hooks); for a call that did not run, as sent. */
  readonly input: JsonValue;
  /** `allow`, `deny`, `user_approved`, `user_rejected`. */
  readonly decision: string;
  /** What decided: `rule:deny:<pattern>`, `hook:<name>`, `policy`, `user`, … */
  readonly source: string;
  /** `ok`, or the error kind of the result (`denied`, `timeout`, …). */
  readonly outcome: string;
  /** Wall time of the execution in ms (every attempt); 0 for a call that did not run. */
  readonly durationMs: number;
  /** Tries made; 0 for a call that did not run. */
  readonly attempts: number;
  /** Why, for a call that did not run (the start of its result's text). */
  readonly reason?: string;
  /** The caller-supplied context of the turn (session, user, working directory, …). */
  readonly context?: JsonObject;
}

/** Tokens and cost of model calls, summed. */
export interface Usage {
  /** Prompt tokens. */
  readonly inputTokens: number;
  /** Completion tokens. */
  readonly outputTokens: number;
  /** Input and output tokens together, as the provider reports them. */
  readonly totalTokens: number;
  /** Cost, in the currency of the model's pricing (the one `limits.budget.maxCost` uses); 0 when no price is known. */
  readonly cost: number;
}

/**
 * One message of the transcript: the system prompt, a user message, an assistant reply (text, tool calls, reasoning) or
 * a tool result.
 */
export type Message =
  | { readonly role: 'system'; readonly content: string }
  | { readonly role: 'user'; readonly content: string }
  | { readonly role: 'assistant'; readonly content: string; readonly toolCalls: readonly ToolCall[]; readonly reasoning?: string }
  | { readonly role: 'tool'; readonly result: ToolResult };

/** What a model call returned (the `model_responded` event carries it). */
export interface ModelResponse {
  /** The reply's text; empty when the model only called tools. */
  readonly text: string;
  /** The tool calls of the reply, in the model's order; empty for a final answer. */
  readonly toolCalls: readonly ToolCall[];
  /** The model's reasoning text, when the provider returns it; kept in the transcript's assistant message. */
  readonly reasoning?: string;
  /** Tokens and cost of this call; missing fields count as 0. */
  readonly usage?: Partial<Usage>;
  /** The provider's finish reason (`stop`, `tool-calls`, `length`, …), for traces and telemetry. */
  readonly finishReason?: string;
  /** The model that answered, as the provider names it. */
  readonly modelId?: string;
}

/** Why a turn (or a model call) failed: the `failed` outcome's `error` and the `model_failed` event's. */
export interface TurnError {
  /** A stable machine-readable kind: `model_error`, `invalid_model_response`, `output_invalid`, … */
  readonly kind: string;
  /** What went wrong, for a person. */
  readonly message: string;
  /**
   * A model error that may succeed if the call is made again (rate limit, overload, network): core retries it up to
   * `limits.maxModelRetries` times.
   */
  readonly retryable?: boolean;
  /** Details as JSON (for a model error, e.g. the HTTP status and `retryAfterMs`). */
  readonly data?: JsonValue;
}

/**
 * A person's decision on a parked call: approve (optionally remember it for the session or for the tool) or reject
 * (optionally with a reason the model sees).
 */
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

/** A tool call waiting for a person's decision, in `TurnBatch.parked` and the `tools_parked` event. */
export interface ParkedCall {
  /** The call as the model sent it. */
  readonly call: ToolCall;
  /**
   * The input that runs if the call is approved: what the dispatcher's before-hooks left (the
   * call's own input when none rewrote it). Show this one to the person deciding. Always set in a
   * state; a `tools_parked` event without it parks the call's own input.
   */
  readonly input?: JsonValue;
  /** Why it waits, for the person deciding (what the rule, hook or policy that asked for approval said). */
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

/** Why a turn that ended normally (`stopped`) stopped: an answer (`completed`), a limit, a loop or an after-hook. */
export type StopReason = 'completed' | 'max_iterations' | 'loop_detected' | 'budget_exhausted' | 'hook_stopped';

/** How a turn ended: `stopped` with its output, `failed` with an error, or `cancelled` with a reason. */
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

/**
 * The limits a caller sets (`createTurn`'s and `runTurn`'s `limits`); every field is optional and defaults as in
 * `TurnLimits`.
 */
export interface TurnLimitsInput {
  /** Tool rounds before a forced final answer (tools disabled). Default 10. */
  readonly maxIterations?: number;
  /** Identical tool batches in a row that count as a loop. Default 5; 0 disables loop detection. */
  readonly loopThreshold?: number;
  /** Tools whose calls neither count towards nor reset loop detection. Default none. */
  readonly loopExemptTools?: readonly string[];
  /** Times a rejected final output is sent back to the model for repair. Default 2. */
  readonly maxOutputRepairs?: number;
  /** Tool calls of one model reply that may run; the others get an error result saying why. Default 32. */
  readonly maxCallsPerReply?: number;
  /** Retries of a failed model call whose error says `retryable: true`. Default 2. */
  readonly maxModelRetries?: number;
  /**
   * The first retry's wait in ms, doubled for each next retry (the provider's `retryAfterMs` when longer; never over 60
   * s). Default 500.
   */
  readonly modelRetryBackoffMs?: number;
  /**
   * Times a detected loop is answered with a nudge (the batch skipped, the model told) instead of a forced final
   * answer. Default 0.
   */
  readonly loopRecoveries?: number;
  /** Caps on model calls, tool calls, tokens and cost; reaching one stops the turn with `budget_exhausted`. Default none. */
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

/** `createTurn`'s options. */
export interface TurnOptions {
  /** The turn's id: in every call record, notice and stored row of the turn. */
  readonly id: string;
  /** The turn's limits (see `TurnLimitsInput` for each one and its default). */
  readonly limits?: TurnLimitsInput;
  /** The agent's name, for a turn whose agent may delegate, hand off or change model (docs/agents.md). */
  readonly agent?: string;
}

/**
 * Where a turn is: `ready` before `start`, a working status while it runs, or a terminal one (`stopped`, `failed`,
 * `cancelled`). docs/turn-machine.md draws the transitions.
 */
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

/** The whole state of a turn: plain JSON, saved and read back with `parseTurnState`. Change it only through `step`. */
export interface TurnState {
  /** The shape's version (`TURN_STATE_VERSION`); `parseTurnState` refuses another. */
  readonly version: number;
  /** The turn's id (`TurnOptions.id`). */
  readonly id: string;
  /** Where the turn is. */
  readonly status: TurnStatus;
  /** The limits in force, every default filled in. */
  readonly limits: TurnLimits;
  /** Tool rounds applied (a batch skipped as a loop does not count). */
  readonly round: number;
  /** What the turn has spent so far (tokens, cost, model and tool calls). */
  readonly usage: TurnUsage;
  /** Why the next model call is a forced final one, or `null`. */
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
  /** Output repairs used (`limits.maxOutputRepairs`). */
  readonly repairs: number;
  /** Loop recoveries used (`limits.loopRecoveries`): loops answered with a nudge instead of a forced final call. */
  readonly recoveries: number;
  /** The final text waiting for check_output. */
  readonly candidate: string | null;
  /** The one-shot model override for the next model call. */
  readonly nextModel: string | null;
  /** The last model call issued (a resumed `calling_model` turn issues it again), or `null`. */
  readonly lastRequest: CallLlmRequest | null;
  /** How the turn ended, once it is terminal; `null` before. */
  readonly outcome: Outcome | null;
  /** What core keeps to give every call of the turn its own id (see `ToolCall` and `CallIds`). */
  readonly callIds: CallIds;
  /** The agents of a multi-agent turn (the active one, its model, the child turn running), else null. */
  readonly agents: TurnAgents | null;
}

/** A `transfer_task` call of the batch in flight, waiting for (or running) its child turn. */
export interface Delegation {
  /** The `transfer_task` call that waits for the child turn. */
  readonly callId: string;
  /** The agent the task is given to. */
  readonly agent: string;
  /** The task, the child turn's input. */
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

/**
 * A fact an interpreter feeds to `step`: the turn started, the model answered or failed, tools completed or parked, a
 * person decided, output was checked, a cancel arrived. docs/turn-contract.md lists which event answers which effect.
 */
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

/**
 * Something worth telling a reader that changes nothing: the `emit` effect's payload, `onNotice`'s argument and a
 * stream's `notice` event.
 */
export interface Notice {
  /** Which notice: `turn_started`, `iteration`, `awaiting_approval`, `limit_reached`, `model_retry`, `hook_blocked`, … */
  readonly name: NoticeName;
  /** The notice's details as JSON (for `iteration`, the round; for `model_retry`, the attempt and delay; …). */
  readonly data: JsonValue;
}

export type Checkpoint = 'dispatching' | 'parked' | 'boundary';

export interface CompactInfo {
  readonly round: number;
  readonly usage: TurnUsage;
}

/**
 * A command from `step` to an interpreter. `append`, `emit` and `persist` are performed in order and answered by
 * nothing; the blocking one (at most one, always last) is answered by exactly one event.
 */
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

/** A tool as the model is offered it: name, description and the JSON Schema of its input. */
export interface ToolSpec {
  /** The tool's name, as the model calls it. */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** JSON Schema of the tool's input. */
  readonly inputSchema: JsonObject;
}

/** What an interpreter asks a model for: the transcript so far and the tools on offer. */
export interface ModelRequest {
  /** The transcript, system message first. */
  readonly messages: readonly Message[];
  /** Empty for a forced final call. */
  readonly tools: readonly ToolSpec[];
  /** 'none' for a forced final call. */
  readonly toolChoice: 'auto' | 'none';
  /** Use this model for this call only (an after-hook's `modelOverride`); adapters that cannot switch ignore it. */
  readonly modelOverride?: string;
  /** The round this call belongs to (1 for the first call). */
  readonly iteration: number;
}

/**
 * One piece of a streamed model reply (`Model.stream`): text and reasoning deltas, a tool call's start, argument text
 * and end, and the final `finish` with usage.
 */
export type ModelStreamPart =
  | { readonly type: 'text_delta'; readonly text: string }
  | { readonly type: 'reasoning_delta'; readonly text: string }
  | { readonly type: 'tool_call_start'; readonly id: string; readonly name: string }
  | { readonly type: 'tool_call_delta'; readonly id: string; readonly argsText: string }
  | { readonly type: 'tool_call_end'; readonly id: string }
  | { readonly type: 'finish'; readonly usage?: Partial<Usage>; readonly finishReason?: string; readonly modelId?: string };

/** What an interpreter passes to every model call besides the request. */
export interface ModelCallOptions {
  /** Aborted when the turn is cancelled or the caller's signal fires: stop the request. */
  readonly signal: AbortSignal;
}

/**
 * A model as turnkit calls it: `generate` for a whole reply, and `stream` (optional) for deltas. `fromAISDK` makes one
 * from an AI SDK model; `scriptedModel` (@turnkit/testing) from a script.
 */
export interface Model {
  /**
   * Makes one model call and returns the whole reply. Throw (or reject) on failure: an error carrying a
   * `turnError` is reported as it is, any other as `model_error`; one with `retryable: true` is retried.
   */
  generate(request: ModelRequest, options: ModelCallOptions): Promise<ModelResponse>;
  /**
   * Makes one model call and yields its reply piece by piece, ending with `finish`. Without it, streaming interpreters
   * call `generate` and emit the reply at once.
   */
  stream?(request: ModelRequest, options: ModelCallOptions): AsyncIterable<ModelStreamPart>;
}

// ---------------------------------------------------------------------------------------------
// Traces: what an interpreter records when asked (plain JSON; `replay` in @turnkit/testing reads it).

/** One transition: the event fed, the state after it, and the effects it produced. */
export interface TraceEntry {
  /** The event fed to `step`. */
  readonly event: TurnEvent;
  /** The state `step` returned. */
  readonly state: TurnState;
  /** The effects `step` returned. */
  readonly effects: readonly Effect[];
}

/** Every transition of a run, from `initial` (a resumed run starts from its persisted state). */
export interface Trace {
  /** The state the run started from (a fresh turn, or the persisted state of a resumed one). */
  readonly initial: TurnState;
  /** Every transition, in order. */
  readonly entries: readonly TraceEntry[];
}
