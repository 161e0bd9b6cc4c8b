// exploreTurn throughput: states per second of an exploration of the real `step` (every edge
// checked against the invariants).
import { exploreTurn } from '@turnkit/check';
import type { TurnLimitsInput } from '@turnkit/core';
import type { ExploreFigure } from './report-types.js';

/** Explores every reachable state under `limits`; throws if the exploration reports a violation. */
export function measureExplore(limits: TurnLimitsInput, maxDepth: number): ExploreFigure {
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  const explored = exploreTurn({ limits, maxDepth });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  if (explored.violationCount !== 0) {
    const first = explored.violations[0];
    throw new Error(
      `exploreTurn found ${explored.violationCount} invariant violations under ${JSON.stringify(limits)}; fix them before benchmarking` +
        (first ? ` (first: invariant ${first.invariant}, ${first.message}, after ${first.path.join(' → ')}).` : '.'),
    );
  }
  const settings = Object.entries(limits)
    .map(([key, value]) => `${key} ${String(value)}`)
    .join(', ');
  return {
    limits: `${settings}; ${explored.exhaustive ? 'exhaustive' : `cut at depth ${maxDepth}`}`,
    states: explored.states,
    transitions: explored.transitions,
    seconds,
    cpuSeconds: (used.user + used.system) / 1e6,
    statesPerSecond: explored.states / seconds,
  };
}
