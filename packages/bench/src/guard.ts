// The speed bar of a full `pnpm bench`: turnkit's reference row stays at least
// `TARGETS.fastestPeerRatio` times faster per turn than the fastest peer and at least
// `TARGETS.heavyPeerRatio` times faster than each of `TARGETS.heavyPeers` (the median time per turn
// of the same run, the peers interleaved with turnkit). A `--quick` run has no peers and too few
// turns to warm the code up: it asserts no timing, and reports the reference row's allocation per
// turn without enforcing it.
import type { TurnReport } from './report-types.js';
import { int, turnTargets } from './targets.js';
import { TURNKIT_REFERENCE } from './turnkit.js';

export interface GuardVerdict {
  /** False only when a full run misses the speed bar (or could not measure it). */
  readonly ok: boolean;
  readonly message: string;
}

/** Checks the run against the speed bar; a `--quick` run passes and says what it measured. */
export function checkSpeedBar(report: TurnReport): GuardVerdict {
  const row = report.turns.find((t) => t.name === TURNKIT_REFERENCE);
  if (row === undefined) return { ok: false, message: `The run has no '${TURNKIT_REFERENCE}' row.` };
  const allocation = Number.isFinite(row.bytesPerTurn)
    ? `${row.name} allocates ${int(row.bytesPerTurn)} bytes per turn (reported, not enforced)`
    : `the allocation of '${row.name}' was not measured`;
  if (report.quick)
    return { ok: true, message: `${allocation}; a --quick run asserts no timing (the full pnpm bench checks the speed bar).` };
  const bar = turnTargets(report);
  const failed = bar.filter((t) => t.verdict !== 'met');
  const measured = bar.map((t) => `${t.name}: ${t.measured} (${t.target})`).join('; ');
  if (failed.length === 0) return { ok: true, message: `met. ${measured}; ${allocation}.` };
  return {
    ok: false,
    message: `missed. ${measured}; ${allocation}. Profile the turn (pnpm bench prints the functions with the most self time) and find what got slower.`,
  };
}
