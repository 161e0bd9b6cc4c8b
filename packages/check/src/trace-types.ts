// The shapes of a trace and of what the invariants report: plain types, shared by the checks
// (invariants.ts) and the history monitor (history.ts).
import type { Effect, TurnState } from '@turnkit/core';
import type { TurnLimits } from '@turnkit/core/internal';
import type { StepFunction } from './logic.js';

/** One step of a trace: `[next, effects] = step(state, event)`; `thrown` when step threw. */
export interface TraceStep {
  readonly state: TurnState;
  readonly event: unknown;
  readonly next: TurnState;
  readonly effects: readonly Effect[];
  readonly thrown?: string;
}

/**
 * A run of one turn. `steps[i + 1].state` is `steps[i].next`. Traces start at any state (usually a
 * fresh `createTurn`); counts such as model calls start from that state's counters. Build one
 * with `runEvents`.
 */
export interface StepTrace {
  readonly limits: TurnLimits;
  readonly steps: readonly TraceStep[];
}

export type InvariantNumber = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10;

/** An invariant of the turn contract a trace breaks (`checkInvariants`). */
export interface Violation {
  /** The invariant's number in docs/turn-contract.md. */
  readonly invariant: InvariantNumber;
  /** Index of the offending step in the trace. */
  readonly step: number;
  /** What is wrong, in words. */
  readonly message: string;
}

export interface CheckOptions {
  /** The reducer re-run for invariants 2 and 3 (default: core's `step`). */
  readonly step?: StepFunction;
  /** Check only these invariants (default: all ten). */
  readonly only?: readonly InvariantNumber[];
  /**
   * The purity checks: `step` re-run on deep-frozen copies and on a JSON round trip of the state
   * (invariants 2 and 3). Default true. An exploration runs them on a sample of its edges.
   */
  readonly purity?: boolean;
  /**
   * `parseTurnState` accepts both states of the step unchanged (invariant 3). Default true. An
   * exploration turns it off and runs `textParseProblem` once per distinct state instead.
   */
  readonly parseStates?: boolean;
  /**
   * Core's cross-field state invariants (`stateProblems`) hold for both states of the step
   * (invariant 3). Default true. An exploration turns it off and checks each distinct state once
   * instead (`stateInvariantProblems`).
   */
  readonly stateInvariants?: boolean;
}
