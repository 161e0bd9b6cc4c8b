// The types of the driver kit (`@turnkit/inline/driver`): the handler context, the handler table,
// and what a turn is driven with.

import type { ApprovalDecision, Effect, Message, Model, Notice, ToolResult, TurnEvent, TurnState } from '@turnkit/core';
import type { JsonObject, TurnLimits } from '@turnkit/core/internal';
import type { Dispatcher } from '@turnkit/dispatch';
import type {
  AgentOptions,
  ApproveFn,
  CheckFn,
  CompactFn,
  OutputSchema,
  SelectToolsFn,
  StepRecord,
  UndecidedPolicy,
} from './types.js';

/** One agent of a turn's tree, checked once: its options, the maker of its dispatcher (runtime tools included), its limits. */
export interface AgentEntry {
  readonly options: AgentOptions;
  readonly dispatcher: () => Dispatcher;
  readonly limits: TurnLimits;
}

/** Every agent a turn may reach, by name. */
export type AgentDirectory = ReadonlyMap<string, AgentEntry>;

/** Everything a handler may use. `transcript` is live: the `append` handler pushes onto it. */
export interface HandlerContext {
  /** The turn's id. */
  readonly turnId: string;
  /** The model `call_llm` calls. */
  readonly model: Model;
  /** The dispatcher `dispatch_tools` and `execute_approved` go through. */
  readonly dispatcher: Dispatcher;
  /** The transcript so far; the `append` handler pushes each message onto it. */
  readonly transcript: Message[];
  /** Aborts when the turn is cancelled; pass it to every model and tool call. */
  readonly signal: AbortSignal;
  /** Decides parked calls (`runTurn`'s `approve`); without it a parked turn suspends. */
  readonly approve?: ApproveFn | undefined;
  /** What a parked call `approve` leaves out gets (default `'expire'`). */
  readonly whenUndecided?: UndecidedPolicy | undefined;
  /** Decisions known up front, by call id (passed to the dispatcher as `decisions`). */
  readonly decisions?: Readonly<Record<string, ApprovalDecision>> | undefined;
  /** The session a person's grants belong to (passed to the dispatcher as `session`). */
  readonly session?: string | undefined;
  /** The schema `check_output` validates the final answer with, if any. */
  readonly output?: OutputSchema | undefined;
  /** The custom output check `check_output` runs, if any. */
  readonly check?: CheckFn | undefined;
  /** The compaction `compact` runs, if any (without it the transcript is kept whole). */
  readonly compact?: CompactFn | undefined;
  /** Which tools each model call is offered (see `modelRequestFor`). */
  readonly selectTools?: SelectToolsFn | undefined;
  /** Tools offered to every model call whatever `selectTools` returns. */
  readonly alwaysOffer?: readonly string[] | undefined;
  /** The caller's context (session, user, working directory, …), handed to hooks, policies and records. */
  readonly context?: JsonObject | undefined;
  /** Hears every notice (the `emit` handler calls it). */
  readonly onNotice?: ((notice: Notice) => void) | undefined;
  /** Sees every effect before it is performed. */
  readonly onEffect?: ((effect: Effect) => void) | undefined;
  /** Sees every transition. */
  readonly onStep?: ((record: StepRecord) => void) | undefined;
  /**
   * Sees each tool result as soon as its call is decided or its tool finishes (completion order),
   * before the batch reaches core: the driver passes it to the dispatcher as `onResult`.
   */
  readonly onToolResult?: ((result: ToolResult) => void) | undefined;
  /** The agents a multi-agent turn may reach, by name (agents.ts); undefined for a turn of one agent. */
  readonly agents?: AgentDirectory | undefined;
  /** The agents from the root turn's to this context's (`['supervisor', 'researcher']`), in a multi-agent turn. */
  readonly agentPath?: readonly string[] | undefined;
  /** Child turns' transcripts a suspended result kept, by child turn id: a resumed child goes on with its own. */
  readonly childTranscripts?: Readonly<Record<string, readonly Message[]>> | undefined;
}

/** The effect of one type. */
export type EffectOf<T extends Effect['type']> = Extract<Effect, { type: T }>;

/**
 * The table from effect type to handler. Blocking handlers return a promise of the one event to
 * feed back; a blocking handler that throws or rejects becomes an event (see `handlerFailed`).
 * `append` and `persist` must not throw (a lost message or checkpoint cannot be papered over: the
 * error propagates).
 */
export interface EffectHandlers {
  /** Appends the message to `ctx.transcript` (and wherever the interpreter keeps it). */
  append(effect: EffectOf<'append'>, ctx: HandlerContext): void | Promise<void>;
  /** Tells `ctx.onNotice` (or a stream's reader) about the notice. */
  emit(effect: EffectOf<'emit'>, ctx: HandlerContext): void | Promise<void>;
  /** Saves a checkpoint of `state` (the default handler does nothing; a durable interpreter writes it). */
  persist(effect: EffectOf<'persist'>, ctx: HandlerContext, state: TurnState): void | Promise<void>;
  /** Calls the model and returns `model_responded` or `model_failed` (a retry's wait is `retryWait`, before it). */
  call_llm(effect: EffectOf<'call_llm'>, ctx: HandlerContext): Promise<TurnEvent>;
  /** Dispatches the batch and returns `tools_completed` or `tools_parked`. */
  dispatch_tools(effect: EffectOf<'dispatch_tools'>, ctx: HandlerContext): Promise<TurnEvent>;
  /** Runs the approved calls and returns `approved_tools_completed`. */
  execute_approved(effect: EffectOf<'execute_approved'>, ctx: HandlerContext): Promise<TurnEvent>;
  /** Runs the compaction, replaces the transcript, and returns `compacted`. */
  compact(effect: EffectOf<'compact'>, ctx: HandlerContext): Promise<TurnEvent>;
  /** Checks the final answer and returns `output_accepted` or `output_rejected`. */
  check_output(effect: EffectOf<'check_output'>, ctx: HandlerContext): Promise<TurnEvent>;
  /** The turn is parked (no blocking effect): the event that decides it, or null to suspend. */
  parked(state: TurnState, ctx: HandlerContext): Promise<TurnEvent | null>;
  /**
   * How a model call's retry waits its `delayMs` before `call_llm` (default: a timer that the
   * turn's signal stops). A durable interpreter waits in its engine instead (a durable sleep); a
   * wait that rejects, or ends with the turn's signal aborted, makes the effect a cancel.
   */
  retryWait?(delayMs: number, ctx: HandlerContext): Promise<void>;
}

/**
 * What a turn is driven with: the model, the caller's signal, the trace switch and the callbacks
 * the context carries. `RunTurnOptions` and `ResumeTurnOptions` are such; an agent run builds one.
 */
export interface DriveOptions {
  readonly model: Model;
  readonly signal?: AbortSignal | undefined;
  /** `true` records the turn's transitions (a trace object, as a spread result carries, is ignored). */
  readonly trace?: unknown;
  readonly onStep?: ((record: StepRecord) => void) | undefined;
  readonly approve?: ApproveFn | undefined;
  readonly whenUndecided?: UndecidedPolicy | undefined;
  /** The session a person's grants belong to. */
  readonly session?: string | undefined;
  /** The caller's context of the turn, which hooks, policies and audit records see. */
  readonly context?: JsonObject | undefined;
  /** Decisions known up front, by call id (for a new turn; a resume's `decisions` are for its pending calls). */
  readonly decisions?: Readonly<Record<string, ApprovalDecision>> | undefined;
  /** Seals a suspended result with this secret. */
  readonly sealSecret?: string | Uint8Array | undefined;
  /** null is what a spread suspended result carries in `output`: no schema. */
  readonly output?: OutputSchema | null | undefined;
  readonly check?: CheckFn | undefined;
  readonly compact?: CompactFn | undefined;
  readonly selectTools?: SelectToolsFn | undefined;
  readonly alwaysOffer?: readonly string[] | undefined;
  readonly onNotice?: ((notice: Notice) => void) | undefined;
  readonly onEffect?: ((effect: Effect) => void) | undefined;
}

/** The part of an agent built once. */
export interface PreparedAgent {
  readonly options: AgentOptions;
  readonly dispatcher: () => Dispatcher;
  readonly limits: TurnLimits;
  /** A multi-agent turn's agents, by name (the root's own name among them), else undefined. */
  readonly agents?: AgentDirectory | undefined;
}
