// Allocation per turn: every byte the heap grew by over a few hundred turns, garbage collections
// included. V8's GC profiler (`v8.GCProfiler`) reports the heap's size before and after each
// collection, so what a collection freed is added back: allocated = growth + freed. Rounds run
// after a long settling, when the JIT has compiled the turn's code (code not yet optimised
// allocates more, and how soon it is optimised depends on the machine's load); the figure is the
// median round. Quick runs of one commit agree within about 2% this way, loaded machine or not.
import { GCProfiler, getHeapStatistics } from 'node:v8';
import { median } from './stats.js';

export interface AllocationFigure {
  /** Median bytes allocated per turn over the rounds (NaN when nothing was measured). */
  readonly bytes: number;
  /** Turns run for the figure, settling included. */
  readonly turns: number;
}

export interface AllocationOptions {
  /** Turns run before the rounds, so the JIT has settled. */
  readonly settleTurns: number;
  readonly rounds: number;
  /** Turns per round, at most; fewer for a slow system (see `budgetMs`). */
  readonly turnsPerRound: number;
  /** About how long the rounds may take together: a system slower than that runs fewer turns (at least 20 a round). */
  readonly budgetMs: number;
}

export const ALLOCATION_DEFAULTS: AllocationOptions = { settleTurns: 2_000, rounds: 5, turnsPerRound: 500, budgetMs: 3_000 };

const usedHeap = (): number => getHeapStatistics().used_heap_size;

/** Bytes allocated by `count` runs of `run`: the heap's growth plus what collections freed meanwhile. */
async function allocatedBy(run: () => Promise<void>, count: number): Promise<number> {
  const profiler = new GCProfiler();
  profiler.start();
  const before = usedHeap();
  try {
    for (let i = 0; i < count; i++) await run();
  } catch (error) {
    profiler.stop();
    throw error;
  }
  const after = usedHeap();
  let freed = 0;
  for (const c of profiler.stop()?.statistics ?? [])
    freed += c.beforeGC.heapStatistics.usedHeapSize - c.afterGC.heapStatistics.usedHeapSize;
  return after - before + freed;
}

/**
 * Measures `run`'s allocation per call; `gc` is a full collection (`node --expose-gc`), run
 * before each round so every round starts from the same heap. Settling stops early once it has
 * taken twice the budget (at least 100 turns), so a slow system costs seconds, not minutes.
 */
export async function bytesPerTurn(
  run: () => Promise<void>,
  gc: () => void,
  options: Partial<AllocationOptions> = {},
): Promise<AllocationFigure> {
  const { settleTurns, rounds, turnsPerRound, budgetMs } = { ...ALLOCATION_DEFAULTS, ...options };
  const started = performance.now();
  let settled = 0;
  while (settled < settleTurns && (settled < 100 || performance.now() - started < 2 * budgetMs)) {
    await run();
    settled++;
  }
  const msPerTurn = settled === 0 ? 0 : (performance.now() - started) / settled;
  const affordable = msPerTurn === 0 ? turnsPerRound : Math.floor(budgetMs / rounds / msPerTurn);
  const perRound = Math.max(20, Math.min(turnsPerRound, affordable));
  const samples: number[] = [];
  for (let round = 0; round < rounds; round++) {
    gc();
    samples.push((await allocatedBy(run, perRound)) / perRound);
  }
  return { bytes: median(samples), turns: settled + rounds * perRound };
}
