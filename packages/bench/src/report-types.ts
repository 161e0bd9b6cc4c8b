// The figures of one benchmark run, as report.ts renders them.
import type { SystemTiming } from './harness.js';
import type { ProfileFigure } from './profile.js';

export interface SuspendedHeapFigure {
  readonly turns: number;
  /** Heap bytes still reachable per parked turn (its whole suspended result), after a full GC. */
  readonly bytesPerTurn: number;
  /** JSON size of one parked turn's suspended result, for scale. */
  readonly jsonBytesPerTurn: number;
}
export interface StepFigure {
  readonly transitions: number;
  readonly turns: number;
  readonly nsPerTransition: number;
}
export interface StreamingFigure {
  readonly deltas: number;
  readonly turnkitPerSecond: number;
  /** Absent in `--quick` runs (no peers). */
  readonly aiSdkPerSecond?: number;
}
export interface ExploreFigure {
  readonly limits: string;
  readonly states: number;
  readonly transitions: number;
  readonly seconds: number;
  /** CPU time of the exploration (less than `seconds` on a machine busy with other work). */
  readonly cpuSeconds: number;
  readonly statesPerSecond: number;
}
export interface LongTurnFigure {
  readonly rounds: number;
  /** Rounds per block. */
  readonly block: number;
  readonly transitionsPerRound: number;
  /** Nanoseconds per transition of each block, in order (the median over the passes). */
  readonly nsPerTransition: readonly number[];
}

/**
 * What the per-turn comparison measured (`pnpm bench --per-turn` runs only this): the time, CPU
 * and allocation per turn of every system, `step`'s cost per transition (what bounds the turn
 * says what its transitions cost) and the reference system's profile.
 */
export interface TurnReport {
  readonly date: string;
  readonly node: string;
  readonly cpu: string;
  /** 1-minute load average and core count when the run started (other load skews every figure). */
  readonly load: { readonly average: number; readonly cores: number };
  readonly command: string;
  readonly quick: boolean;
  /** How long the run took, wall time (a first run's install of the peers included). */
  readonly seconds?: number;
  /** The reference (turnkit inline) first. */
  readonly turns: readonly SystemTiming[];
  readonly step: StepFigure;
  /** The reference system's CPU profile (absent in `--quick` runs). */
  readonly profile?: ProfileFigure;
}

/** A full run: the per-turn comparison and the turnkit-only figures. */
export interface BenchReport extends TurnReport {
  readonly suspendedHeap: SuspendedHeapFigure;
  readonly streaming: StreamingFigure;
  readonly explore: ExploreFigure;
  readonly longTurn: LongTurnFigure;
}
