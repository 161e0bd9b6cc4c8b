// The structural types the conformance suite needs from an interpreter. @turnkit/testing never
// imports an interpreter: `runTurn` of @turnkit/inline (or yours) only has to accept these options.

import type {
  ApprovalDecision,
  JsonValue,
  Message,
  Model,
  ParkedCall,
  StopReason,
  TurnError,
  TurnLimitsInput,
} from '@turnkit/core';
import type { Dispatcher, DispatcherOptions, Grant } from '@turnkit/dispatch';
import type { z } from 'zod';

/** The options a conformance scenario passes to the interpreter under test. */
export interface ConformanceRunOptions {
  /** The turn's id. */
  readonly id: string;
  /** The scenario's scripted model. */
  readonly model: Model;
  /** The scenario's dispatcher: run every call through it. */
  readonly tools: Dispatcher;
  /**
   * The options `tools` was made with (`createDispatcher(dispatcherOptions)`), for an interpreter
   * that makes its own dispatcher from the tool definitions (a durable store wraps each tool with
   * its journal). An interpreter that takes `tools` as it is ignores this.
   */
  readonly dispatcherOptions?: DispatcherOptions;
  /** The user's message. */
  readonly input: string;
  /** The system prompt, if the scenario has one. */
  readonly system?: string;
  /** Earlier messages of the conversation, if the scenario has them. */
  readonly transcript?: readonly Message[];
  /** The scenario's turn limits. */
  readonly limits?: TurnLimitsInput;
  /** A call left out of the answer expires (rejected with reason `approval expired`). */
  readonly approve?: (
    pending: readonly ParkedCall[],
    info: { readonly turnId: string },
  ) => Promise<Record<string, ApprovalDecision>>;
  /** The final text must be JSON this schema accepts; a failure is sent back for repair. */
  readonly output?: z.ZodType;
  /** Aborted by scenarios that cancel the turn: the result must be `cancelled`. */
  readonly signal?: AbortSignal;
}

/** What the suite reads from an interpreter's result. */
export interface ConformanceResult {
  /** How the run came back. */
  readonly status: 'stopped' | 'failed' | 'cancelled' | 'suspended';
  /** The accepted output; null unless stopped. */
  readonly output: JsonValue;
  /** The content of the last assistant message. */
  readonly text: string;
  /** Why a stopped turn stopped. */
  readonly stopReason?: StopReason;
  /** Why a failed turn failed. */
  readonly error?: TurnError;
  /** The turn's state (for a suspended turn, what the resume continues from). */
  readonly state: unknown;
  /** The whole conversation. */
  readonly transcript: readonly Message[];
  /** The calls waiting for a decision (suspended only). */
  readonly pending?: readonly ParkedCall[];
  /** Remembered grants (suspended only). */
  readonly grants?: readonly Grant[];
}

/** Continues a suspended turn with decisions (optional: `interpreterConformance`'s third argument). */
export interface ConformanceResumeOptions extends Omit<ConformanceRunOptions, 'input'> {
  /** The suspended result's `state`. */
  readonly state: unknown;
  /** The suspended result's `transcript`. */
  readonly transcript: readonly Message[];
  /** Decisions for the pending calls, by call id. */
  readonly decisions: Record<string, ApprovalDecision>;
  /** The suspended result's `grants`. */
  readonly grants?: readonly Grant[];
}

/** An interpreter's run as the suite calls it: `(options) => runTurn(options)` for @turnkit/inline. */
export type ConformanceRun = (options: ConformanceRunOptions) => Promise<ConformanceResult>;
/** An interpreter's resume as the suite calls it: `(options) => resumeTurn(options)` for @turnkit/inline. */
export type ConformanceResume = (options: ConformanceResumeOptions) => Promise<ConformanceResult>;
