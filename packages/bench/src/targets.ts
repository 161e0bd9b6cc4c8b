// The performance targets, checked against one run.
import { median } from './stats.js';
import type { BenchReport, TurnReport } from './report-types.js';
import type { SystemTiming } from './harness.js';

export const TARGETS = {
  /** turnkit agent.run at least this many times faster per turn than the fastest peer. */
  fastestPeerRatio: 2.5,
  /** turnkit agent.run at least this many times faster per turn than every system of `heavyPeers`. */
  heavyPeerRatio: 10,
  /** The peers held to `heavyPeerRatio`, by the start of their row's name. */
  heavyPeers: ['AI SDK', 'OpenAI Agents', 'LangChain'],
  stepNs: 300,
  deltasPerSecond: 1_000_000,
  bytesPerSuspendedTurn: 2048,
  /** Twice the 1,320 states/s exploreTurn managed before this target was set. */
  exploreStatesPerSecond: 2640,
  /** A long turn's later blocks may cost at most this many times its early ones. */
  longTurnGrowth: 1.5,
} as const;

/**
 * How a target fared: `not measured` when the run has nothing to compare (no peers with
 * `--quick`); `not comparable` for timing targets in a `--quick` run, whose counts are too small
 * to warm the code up, so its times say nothing about the target.
 */
export type TargetVerdict = 'met' | 'missed' | 'not measured' | 'not comparable';

export interface TargetCheck {
  readonly name: string;
  readonly target: string;
  readonly measured: string;
  readonly verdict: TargetVerdict;
}

export const int = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
export const fixed = (n: number, digits: number): string => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

export function fastestPeer(report: Pick<TurnReport, 'turns'>): SystemTiming | undefined {
  return report.turns.filter((t) => t.kind === 'peer').sort((a, b) => a.medianUs - b.medianUs)[0];
}

/** The peer rows held to `TARGETS.heavyPeerRatio`. */
export function heavyPeers(report: Pick<TurnReport, 'turns'>): SystemTiming[] {
  return report.turns.filter((t) => t.kind === 'peer' && TARGETS.heavyPeers.some((name) => t.name.startsWith(name)));
}

export function floorOf(report: Pick<TurnReport, 'turns'>): SystemTiming | undefined {
  return report.turns.find((t) => t.kind === 'floor');
}

/**
 * How much dearer a long turn's second half of blocks is than its first (the first block, which
 * warms the code up, left out): about 1 when `step` costs the same at any length.
 */
export function longTurnGrowth(report: BenchReport): number {
  const blocks = report.longTurn.nsPerTransition.slice(1);
  const half = Math.floor(blocks.length / 2);
  return median(blocks.slice(half)) / median(blocks.slice(0, half));
}

/** The two per-turn targets (the speed bar): turnkit against the fastest peer and against the heavy peers. */
export function turnTargets(report: TurnReport): TargetCheck[] {
  const inline = report.turns[0];
  const peer = fastestPeer(report);
  const peerRatio = inline && peer ? peer.medianUs / inline.medianUs : undefined;
  // The heavy peer turnkit leads by the least.
  const heavy = heavyPeers(report).sort((a, b) => a.medianUs - b.medianUs)[0];
  const heavyRatio = inline && heavy ? heavy.medianUs / inline.medianUs : undefined;
  const timing = (met: boolean): TargetVerdict => (report.quick ? 'not comparable' : met ? 'met' : 'missed');
  return [
    {
      name: `${inline?.name ?? 'turnkit inline'} vs the fastest peer`,
      target: `≥ ${TARGETS.fastestPeerRatio}× less time per turn`,
      measured: peerRatio === undefined || !peer ? 'no peers in this run' : `${fixed(peerRatio, 1)}× (${peer.name})`,
      verdict: peerRatio === undefined ? 'not measured' : timing(peerRatio >= TARGETS.fastestPeerRatio),
    },
    {
      name: `${inline?.name ?? 'turnkit inline'} vs ${TARGETS.heavyPeers.join(', ')}`,
      target: `≥ ${TARGETS.heavyPeerRatio}× less time per turn than each`,
      measured: heavyRatio === undefined || !heavy ? 'no such peers in this run' : `${fixed(heavyRatio, 1)}× (${heavy.name})`,
      verdict: heavyRatio === undefined ? 'not measured' : timing(heavyRatio >= TARGETS.heavyPeerRatio),
    },
  ];
}

/** Each target with its measured value and verdict. */
export function checkTargets(report: BenchReport): TargetCheck[] {
  const growth = longTurnGrowth(report);
  // Timing depends on warm-up; the heap figure does not.
  const timing = (met: boolean): TargetVerdict => (report.quick ? 'not comparable' : met ? 'met' : 'missed');
  return [
    ...turnTargets(report),
    {
      name: '`step` per transition',
      target: `≤ ${TARGETS.stepNs} ns`,
      measured: `${int(report.step.nsPerTransition)} ns`,
      verdict: timing(report.step.nsPerTransition <= TARGETS.stepNs),
    },
    {
      name: '`step` over a long turn',
      target: `later blocks ≤ ${TARGETS.longTurnGrowth}× the early ones`,
      measured: `${fixed(growth, 2)}× over ${int(report.longTurn.rounds)} rounds`,
      verdict: timing(growth <= TARGETS.longTurnGrowth),
    },
    {
      name: 'streaming throughput',
      target: `≥ ${int(TARGETS.deltasPerSecond)} deltas/s`,
      measured: `${int(report.streaming.turnkitPerSecond)} deltas/s`,
      verdict: timing(report.streaming.turnkitPerSecond >= TARGETS.deltasPerSecond),
    },
    {
      name: 'heap per suspended turn',
      target: `≤ ${int(TARGETS.bytesPerSuspendedTurn)} bytes`,
      measured: `${int(report.suspendedHeap.bytesPerTurn)} bytes`,
      verdict: report.suspendedHeap.bytesPerTurn <= TARGETS.bytesPerSuspendedTurn ? 'met' : 'missed',
    },
    {
      name: 'exploreTurn',
      target: `≥ ${int(TARGETS.exploreStatesPerSecond)} states/s`,
      measured: `${int(report.explore.statesPerSecond)} states/s`,
      verdict: timing(report.explore.statesPerSecond >= TARGETS.exploreStatesPerSecond),
    },
  ];
}
