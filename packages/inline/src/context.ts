// The handler context `runTurn` and agents drive a turn with: a class, so making one per turn is a
// plain allocation of one fixed shape, and the AbortSignal stays unmade until someone reads
// `signal`. The `{ signal }` of a model call and the dispatch context are made once per turn and
// kept on it.

import type { ApprovalDecision, CallRecord, Message, Model } from '@turnkit/core';
import type { JsonObject } from '@turnkit/core/internal';
import type { Cancellation, DispatchContext, Dispatcher, LazyCancellation } from '@turnkit/dispatch';
import type { HandlerContext } from './driver.js';
import type { ApproveFn, CheckFn, CompactFn, OutputSchema, SelectToolsFn, StepRecord, UndecidedPolicy } from './types.js';

/** `{ signal }` for a model call: the turn's signal, made only if the model reads it. */
export class ModelCallOptions {
  readonly #cancellation: Cancellation;
  constructor(cancellation: Cancellation) {
    this.#cancellation = cancellation;
  }
  get signal(): AbortSignal {
    return this.#cancellation.signal;
  }
}

/** A dispatch context whose signal is made only if a tool, hook or policy reads it. */
export class LazyDispatchContext implements DispatchContext {
  readonly turnId: string;
  readonly cancellation: Cancellation;
  // Always present (undefined when not given): one shape for every turn.
  readonly session?: string;
  readonly decisions?: Readonly<Record<string, ApprovalDecision>>;
  readonly context?: JsonObject;
  readonly transcript: readonly Message[];
  constructor(turn: TurnContext) {
    this.turnId = turn.turnId;
    this.cancellation = turn.cancellation;
    this.transcript = turn.transcript;
    const self = this as { -readonly [K in 'session' | 'decisions' | 'context']?: LazyDispatchContext[K] | undefined };
    self.session = turn.session;
    self.decisions = turn.decisions;
    self.context = turn.context;
  }
  get signal(): AbortSignal {
    return this.cancellation.signal;
  }
}

/** A turn's dispatch context for one batch, whose audit records go into `records`. */
export class BatchDispatchContext extends LazyDispatchContext {
  readonly onRecord: (record: CallRecord) => void;
  constructor(turn: TurnContext, records: CallRecord[]) {
    super(turn);
    this.onRecord = (record) => void records.push(record);
  }
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
  readonly onNotice?: NonNullable<HandlerContext['onNotice']> | undefined;
  readonly onEffect?: NonNullable<HandlerContext['onEffect']> | undefined;
}

export class TurnContext implements HandlerContext {
  readonly turnId: string;
  readonly model: Model;
  readonly dispatcher: Dispatcher;
  readonly transcript: Message[];
  readonly cancellation: LazyCancellation;
  /** False when nothing can cancel the turn while it runs (no caller's signal): the driver then races nothing. */
  readonly cancellable: boolean;
  // Optional members are always present (undefined when not given): one shape for every turn.
  readonly approve?: ApproveFn;
  readonly whenUndecided?: UndecidedPolicy;
  readonly decisions?: Readonly<Record<string, ApprovalDecision>>;
  readonly session?: string;
  readonly context?: JsonObject;
  readonly output?: OutputSchema;
  readonly check?: CheckFn;
  readonly compact?: CompactFn;
  readonly selectTools?: SelectToolsFn;
  readonly alwaysOffer?: readonly string[];
  readonly onNotice?: NonNullable<HandlerContext['onNotice']>;
  readonly onEffect?: NonNullable<HandlerContext['onEffect']>;
  readonly onStep?: (record: StepRecord) => void;
  #callOptions: ModelCallOptions | undefined;
  #dispatchContext: LazyDispatchContext | undefined;

  constructor(
    turnId: string,
    model: Model,
    dispatcher: Dispatcher,
    transcript: Message[],
    cancellation: LazyCancellation,
    cancellable: boolean,
    options: DriveOptions,
    onStep: ((record: StepRecord) => void) | undefined,
  ) {
    this.turnId = turnId;
    this.model = model;
    this.dispatcher = dispatcher;
    this.transcript = transcript;
    this.cancellation = cancellation;
    this.cancellable = cancellable;
    const self = this as { -readonly [K in keyof TurnContext]?: TurnContext[K] | undefined };
    self.approve = options.approve;
    self.whenUndecided = options.whenUndecided;
    // Up front only for a new turn: a resumed turn's options carry its saved `state`, and their
    // decisions are for its pending calls.
    self.decisions = 'state' in options ? undefined : options.decisions;
    self.session = options.session;
    self.context = options.context;
    // null is what a spread suspended result carries in `output`: no schema.
    self.output = options.output ?? undefined;
    self.check = options.check;
    self.compact = options.compact;
    self.selectTools = options.selectTools;
    self.alwaysOffer = options.alwaysOffer;
    self.onNotice = options.onNotice;
    self.onEffect = options.onEffect;
    self.onStep = onStep;
  }

  get signal(): AbortSignal {
    return this.cancellation.signal;
  }

  /** The `{ signal }` of this turn's model calls. */
  callOptions(): ModelCallOptions {
    this.#callOptions ??= new ModelCallOptions(this.cancellation);
    return this.#callOptions;
  }

  /** The dispatch context of this turn's tool batches. */
  dispatchContext(): LazyDispatchContext {
    this.#dispatchContext ??= new LazyDispatchContext(this);
    return this.#dispatchContext;
  }

  /** The dispatch context of one tool batch, its audit records going into `records`. */
  batchContext(records: CallRecord[]): BatchDispatchContext {
    return new BatchDispatchContext(this, records);
  }
}

/** The context itself when it is a TurnContext (not an object made from one, which may add members). */
export function turnContextOf(ctx: HandlerContext): TurnContext | undefined {
  return Object.getPrototypeOf(ctx) === TurnContext.prototype ? (ctx as TurnContext) : undefined;
}
