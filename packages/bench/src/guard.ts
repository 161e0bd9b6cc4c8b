// The allocation guard CI runs (`pnpm bench --quick`): the reference row's bytes allocated per
// turn may not grow past its recorded value by more than the margin. Allocation, unlike time,
// barely moves between runs on one Node version, so the guard can fail a build without flaking.
// The figure depends on V8, so it is recorded per Node major version; on another version the guard
// reports the figure and checks nothing.
import type { BenchReport } from './report-types.js';
import { fixed, int } from './targets.js';
import { TURNKIT_REFERENCE } from './turnkit.js';

export const ALLOCATION_GUARD = {
  system: TURNKIT_REFERENCE,
  /**
   * Bytes per turn measured by `pnpm bench --quick`, by Node major version. Lower it when a change
   * saves allocation.
   */
  bytesPerTurn: { 20: 45_000 } as Readonly<Record<number, number>>,
  /**
   * How much more a turn may allocate before the guard fails. Quick runs of one commit agree
   * within about 2% (allocation.ts: collections counted, the JIT settled first), so a change that
   * adds a tenth to a turn's garbage fails the build.
   */
  margin: 0.12,
} as const;

export interface GuardVerdict {
  /** False only when the figure is over the limit. */
  readonly ok: boolean;
  readonly message: string;
}

/** Checks the run's reference row against the guard for `nodeVersion` (e.g. `v20.20.2`). */
export function checkAllocationGuard(report: BenchReport, nodeVersion: string = report.node): GuardVerdict {
  const row = report.turns.find((t) => t.name === ALLOCATION_GUARD.system);
  if (row === undefined)
    return { ok: false, message: `The allocation guard found no '${ALLOCATION_GUARD.system}' row in the run.` };
  if (!Number.isFinite(row.bytesPerTurn))
    return { ok: false, message: `The allocation of '${row.name}' was not measured (every batch saw a garbage collection).` };
  const major = Number(/^v(\d+)\./.exec(nodeVersion)?.[1]);
  const recorded = ALLOCATION_GUARD.bytesPerTurn[major];
  const measured = `${row.name} allocates ${int(row.bytesPerTurn)} bytes per turn`;
  if (recorded === undefined)
    return { ok: true, message: `${measured}; no figure is recorded for Node ${nodeVersion}, so the guard checks nothing.` };
  const limit = recorded * (1 + ALLOCATION_GUARD.margin);
  const against = `the guard allows ${int(limit)} (${int(recorded)} recorded for Node ${major} + ${fixed(100 * ALLOCATION_GUARD.margin, 0)}%)`;
  if (row.bytesPerTurn <= limit) return { ok: true, message: `${measured}; ${against}.` };
  return {
    ok: false,
    message: `${measured}, more than ${against}. Find what allocates more (packages/bench/src/allocation.ts measures it), or raise ALLOCATION_GUARD in packages/bench/src/guard.ts if the growth is wanted.`,
  };
}
