// Allocation per turn: the heap's growth over a few turns that start right after a full garbage
// collection, in batches small enough for the young generation, so nothing is collected while the
// batch runs. A batch during which the collector ran anyway is dropped (PerformanceObserver 'gc'
// entries tell), and the figure is the median of the rest. Unlike time, this figure hardly moves
// from run to run, which is what lets CI guard it.
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { median } from './stats.js';

/** Bytes a batch aims at: well inside the smallest young generation V8 shrinks to. */
const BATCH_BYTES = 256 * 1024;
const MAX_TURNS_PER_BATCH = 20;

const heapUsed = (): number => process.memoryUsage().heapUsed;
const nextTurnOfTheLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export interface AllocationFigure {
  /** Median bytes allocated per turn over the batches kept (NaN when every batch saw a collection). */
  readonly bytes: number;
  /** Turns run for the figure. */
  readonly turns: number;
}

/** Runs before the batches: code the JIT has not settled on allocates more, and differently from run to run. */
const SETTLE_TURNS = 300;

/** Measures `run`'s allocation per call; `gc` is a full collection (`node --expose-gc`). */
export async function bytesPerTurn(
  run: () => Promise<void>,
  gc: () => void,
  batches = 15,
  settleTurns = SETTLE_TURNS,
): Promise<AllocationFigure> {
  for (let i = 0; i < settleTurns; i++) await run();
  const collections: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) collections.push(entry.startTime);
  });
  observer.observe({ entryTypes: ['gc'] });
  try {
    gc();
    const before = heapUsed();
    await run();
    const estimate = Math.max(1, heapUsed() - before);
    const perBatch = Math.max(1, Math.min(MAX_TURNS_PER_BATCH, Math.floor(BATCH_BYTES / estimate)));
    let turns = settleTurns + 1;
    const samples: number[] = [];
    for (let batch = 0; batch < batches; batch++) {
      gc();
      const started = performance.now();
      const start = heapUsed();
      for (let i = 0; i < perBatch; i++) await run();
      const end = heapUsed();
      const ended = performance.now();
      turns += perBatch;
      // The observer hears of collections on a later turn of the event loop.
      await nextTurnOfTheLoop();
      await nextTurnOfTheLoop();
      if (collections.some((at) => at > started && at < ended)) continue;
      samples.push((end - start) / perBatch);
    }
    return { bytes: median(samples), turns };
  } finally {
    observer.disconnect();
  }
}
