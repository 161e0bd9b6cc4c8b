// The side-by-side run: warm every system up, then interleave rounds (A B C … A B C …) so that
// machine drift (frequency scaling, GC pressure, other load) hits all systems alike. Every turn
// is timed on its own (wall time) and its outcome verified outside the timed region; each round's
// CPU time is read per system. Before the timed rounds, in the same process, each system's
// allocation per turn is measured after its warm-up (allocation.ts).
import { bytesPerTurn, type AllocationFigure, type AllocationOptions } from './allocation.js';
import { median, p95 } from './stats.js';
import { verifyOutcome, type BenchSystem } from './scenario.js';

export interface TurnTimingOptions {
  /** Turns per system before any sample is kept (JIT warm-up). */
  readonly warmupTurns: number;
  readonly rounds: number;
  /** Turns per system per round. */
  readonly turnsPerRound: number;
  /** A full garbage collection; with it, allocation per turn is measured after the timed rounds. */
  readonly gc?: () => void;
  /** How the allocation per turn is measured (allocation.ts's defaults where left out). */
  readonly allocation?: Partial<AllocationOptions>;
  /** Called after each round, e.g. for a progress line. */
  readonly onRound?: (round: number) => void;
}

export interface SystemTiming {
  readonly name: string;
  readonly kind: BenchSystem['kind'];
  /** Microseconds per turn, one sample per turn. */
  readonly samplesUs: readonly number[];
  /** Turns run and verified, warm-up and allocation turns included. */
  readonly verifiedTurns: number;
  readonly medianUs: number;
  readonly p95Us: number;
  /** CPU time per turn (user + system, all threads of the process), the median over rounds. */
  readonly cpuUs: number;
  /** Bytes allocated per turn (NaN when not measured). */
  readonly bytesPerTurn: number;
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

async function verifiedTurn(system: BenchSystem): Promise<void> {
  verifyOutcome(system.name, await system.run());
}

/**
 * Times every system on the scenario. The first system is the reference for `ratio` (turnkit
 * inline). Throws, naming the system, as soon as one produces anything but the scenario's outcome.
 */
export async function timeTurns(systems: readonly BenchSystem[], options: TurnTimingOptions): Promise<SystemTiming[]> {
  if (systems.length === 0) throw new Error('No systems to benchmark; pass at least the turnkit inline system.');
  const samples = systems.map(() => [] as number[]);
  const cpu = systems.map(() => [] as number[]);
  // Each system warms up, then its allocation is measured, in list order: turnkit and the floor
  // before any peer has run, so no peer's leftover work (timers, callbacks) lands in their figure.
  const allocation: AllocationFigure[] = [];
  for (const system of systems) {
    for (let i = 0; i < options.warmupTurns; i++) await timedTurn(system);
    allocation.push(
      options.gc === undefined
        ? { bytes: Number.NaN, turns: 0 }
        : await bytesPerTurn(() => verifiedTurn(system), options.gc, options.allocation),
    );
  }
  for (let round = 0; round < options.rounds; round++) {
    for (const [index, system] of systems.entries()) {
      const into = samples[index] ?? [];
      const started = process.cpuUsage();
      for (let i = 0; i < options.turnsPerRound; i++) into.push(await timedTurn(system));
      const used = process.cpuUsage(started);
      cpu[index]?.push((used.user + used.system) / options.turnsPerRound);
    }
    options.onRound?.(round + 1);
  }
  const medians = samples.map(median);
  const reference = medians[0] ?? Number.NaN;
  return systems.map((system, index) => {
    const own = samples[index] ?? [];
    const bytes = allocation[index] ?? { bytes: Number.NaN, turns: 0 };
    return {
      name: system.name,
      kind: system.kind,
      samplesUs: own,
      verifiedTurns: own.length + options.warmupTurns + bytes.turns,
      medianUs: medians[index] ?? Number.NaN,
      p95Us: p95(own),
      cpuUs: median(cpu[index] ?? []),
      bytesPerTurn: bytes.bytes,
      ratio: (medians[index] ?? Number.NaN) / reference,
    };
  });
}
