// The side-by-side run: warm every system up, then interleave rounds (A B C … A B C …) so that
// machine drift (frequency scaling, GC pressure, other load) hits all systems alike. Every turn
// is timed on its own and its outcome verified outside the timed region.
import { median, p95 } from './stats.js';
import { verifyOutcome, type BenchSystem } from './scenario.js';

export interface TurnTimingOptions {
  /** Turns per system before any sample is kept (JIT warm-up). */
  readonly warmupTurns: number;
  readonly rounds: number;
  /** Turns per system per round. */
  readonly turnsPerRound: number;
  /** Called after each round, e.g. for a progress line. */
  readonly onRound?: (round: number) => void;
}

export interface SystemTiming {
  readonly name: string;
  readonly kind: BenchSystem['kind'];
  /** Microseconds per turn, one sample per turn. */
  readonly samplesUs: readonly number[];
  /** Turns run and verified, warm-up included. */
  readonly verifiedTurns: number;
  readonly medianUs: number;
  readonly p95Us: number;
  /** This system's median over the reference system's (the first one); >1 means slower. */
  readonly ratio: number;
}

async function timedTurn(system: BenchSystem): Promise<number> {
  const started = process.hrtime.bigint();
  const outcome = await system.run();
  const elapsed = process.hrtime.bigint() - started;
  verifyOutcome(system.name, outcome);
  return Number(elapsed) / 1000;
}

/**
 * Times every system on the scenario. The first system is the reference for `ratio` (turnkit
 * inline). Throws, naming the system, as soon as one produces anything but the scenario's outcome.
 */
export async function timeTurns(systems: readonly BenchSystem[], options: TurnTimingOptions): Promise<SystemTiming[]> {
  if (systems.length === 0) throw new Error('No systems to benchmark; pass at least the turnkit inline system.');
  const samples = systems.map(() => [] as number[]);
  for (const system of systems) {
    for (let i = 0; i < options.warmupTurns; i++) await timedTurn(system);
  }
  for (let round = 0; round < options.rounds; round++) {
    for (const [index, system] of systems.entries()) {
      const into = samples[index] ?? [];
      for (let i = 0; i < options.turnsPerRound; i++) into.push(await timedTurn(system));
    }
    options.onRound?.(round + 1);
  }
  const medians = samples.map(median);
  const reference = medians[0] ?? Number.NaN;
  return systems.map((system, index) => {
    const own = samples[index] ?? [];
    return {
      name: system.name,
      kind: system.kind,
      samplesUs: own,
      verifiedTurns: own.length + options.warmupTurns,
      medianUs: medians[index] ?? Number.NaN,
      p95Us: p95(own),
      ratio: (medians[index] ?? Number.NaN) / reference,
    };
  });
}
