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
  readonly id: string;
  readonly model: Model;
  readonly tools: Dispatcher;
  /**
   * The options `tools` was made with (`createDispatcher(dispatcherOptions)`), for an interpreter
   * that makes its own dispatcher from the tool definitions (a durable store wraps each tool with
   * its journal). An interpreter that takes `tools` as it is ignores this.
   */
  readonly dispatcherOptions?: DispatcherOptions;
  readonly input: string;
  readonly system?: string;
  readonly transcript?: readonly Message[];
  readonly limits?: TurnLimitsInput;
  /** A call left out of the answer expires (rejected with reason `approval expired`). */
  readonly approve?: (
    pending: readonly ParkedCall[],
    info: { readonly turnId: string },
  ) => Promise<Record<string, ApprovalDecision>>;
  /** The final text must be JSON this schema accepts; a failure is sent back for repair. */
  readonly output?: z.ZodType;
  readonly signal?: AbortSignal;
}

/** What the suite reads from an interpreter's result. */
export interface ConformanceResult {
  readonly status: 'stopped' | 'failed' | 'cancelled' | 'suspended';
  readonly output: JsonValue;
  /** The content of the last assistant message. */
  readonly text: string;
  readonly stopReason?: StopReason;
  readonly error?: TurnError;
  readonly state: unknown;
  readonly transcript: readonly Message[];
  readonly pending?: readonly ParkedCall[];
  readonly grants?: readonly Grant[];
}

/** Continues a suspended turn with decisions (optional: `interpreterConformance`'s third argument). */
export interface ConformanceResumeOptions extends Omit<ConformanceRunOptions, 'input'> {
  readonly state: unknown;
  readonly transcript: readonly Message[];
  readonly decisions: Record<string, ApprovalDecision>;
  readonly grants?: readonly Grant[];
}

export type ConformanceRun = (options: ConformanceRunOptions) => Promise<ConformanceResult>;
export type ConformanceResume = (options: ConformanceResumeOptions) => Promise<ConformanceResult>;
