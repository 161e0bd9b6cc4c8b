// `turnkit check`: exhaustive exploration of the real reducer (@turnkit/check's exploreTurn) with
// the invariants checked on every transition. A progress bar runs on stderr on a TTY.

import { exploreTurn, type ExploreResult, type StepFunction } from '@turnkit/check';
import { createTurn, type TurnLimitsInput } from '@turnkit/core';
import { definedProps } from '@turnkit/core/internal';
import pc from 'picocolors';
import { oneLine, UsageError } from '../errors.js';
import { duration } from '../format.js';
import { stderrBar } from '../progress-bar.js';

/** The flag that sets each limit, for a usage error that names it. */
const LIMIT_FLAGS: Readonly<Record<string, { flag: string; value: (o: CheckCommandOptions) => number }>> = {
  maxIterations: { flag: '--max-iterations', value: (o) => o.maxIterations },
  loopThreshold: { flag: '--loop-threshold', value: (o) => o.loopThreshold },
  maxOutputRepairs: { flag: '--repairs', value: (o) => o.repairs },
};

export interface CheckCommandOptions {
  readonly maxIterations: number;
  readonly loopThreshold: number;
  readonly repairs: number;
  readonly depth: number;
  /** The purity re-runs of invariants 2 and 3 on one edge in this many (default 1: every edge). */
  readonly puritySample?: number;
  /** Worker threads to explore on (default 1: this thread). */
  readonly workers?: number;
  /** The reducer to explore (default core's `step`). Internal, not a flag: tests pass a broken one. */
  readonly step?: StepFunction;
}

/** Explores, prints the numbers and any violation; resolves to 1 on a violation, else 0. */
export async function checkCommand(o: CheckCommandOptions): Promise<number> {
  const limits = { maxIterations: o.maxIterations, loopThreshold: o.loopThreshold, maxOutputRepairs: o.repairs };
  checkLimits(limits, o);
  const out = (line = ''): void => void process.stdout.write(`${line}\n`);
  out(
    `${pc.bold('turnkit check')} ${pc.dim(`· maxIterations ${o.maxIterations} · loopThreshold ${o.loopThreshold} · repairs ${o.repairs} · depth ≤ ${o.depth}${(o.puritySample ?? 1) > 1 ? ` · purity re-runs on 1 edge in ${o.puritySample}` : ''}${(o.workers ?? 1) > 1 ? ` · ${o.workers} worker threads` : ''}`)}`,
  );

  const bar = stderrBar('exploring {bar} depth {value}/{total} · {states} states · {frontier} to expand');
  bar?.start(o.depth, 0, { states: 1, frontier: 1 });
  let result: ExploreResult;
  try {
    result = exploreTurn({
      limits,
      maxDepth: o.depth,
      ...definedProps({ step: o.step }),
      ...definedProps({ puritySample: o.puritySample }),
      ...definedProps({ workers: o.workers }),
      onProgress: (p) => bar?.update(p.depth, { states: p.states, frontier: p.frontier }),
    });
  } finally {
    bar?.stop();
  }

  const row = (name: string, value: string): void => out(`${name.padEnd(13)}${value}`);
  row('states', String(result.states));
  row('transitions', String(result.transitions));
  row(
    'depth',
    `${result.depth}${result.cutOff === null ? pc.green(' (exhaustive: every reachable state was expanded)') : pc.yellow(cutOffText(result.cutOff, o.depth))}`,
  );
  row('time', duration(result.ms));
  out('outcomes');
  const outcomes = Object.entries(result.terminalOutcomes).sort(([a], [b]) => a.localeCompare(b));
  const width = Math.max(0, ...outcomes.map(([name]) => name.length)) + 2;
  for (const [name, count] of outcomes) out(`  ${name.padEnd(width)}${count}`);
  row('violations', String(result.violationCount));
  if (result.violationCount === 0) {
    out(pc.green(pc.bold('✔ no invariant was violated')));
    return 0;
  }
  for (const v of result.violations.slice(0, 10)) {
    out(`${pc.red(`✖ invariant ${v.invariant}`)}: ${v.message}`);
    out(pc.dim(`    path: ${v.path.join(' → ')}`));
  }
  if (result.violationCount > 10) out(pc.dim(`… and ${result.violationCount - 10} more`));
  return 1;
}

/** Core's own check of the limits (createTurn's); a value it refuses is a usage error naming its flag. */
function checkLimits(limits: TurnLimitsInput, o: CheckCommandOptions): void {
  try {
    createTurn({ id: 'check', limits });
  } catch (error) {
    const option = (error as { option?: unknown } | null)?.option;
    const named = typeof option === 'string' ? LIMIT_FLAGS[option] : undefined;
    if (named === undefined) throw error;
    throw new UsageError(`${named.flag} ${named.value(o)} is invalid: ${oneLine(error)}`);
  }
}

/** What cut an exploration off, and what to do. */
function cutOffText(cutOff: 'maxDepth' | 'violation' | 'memory', depth: number): string {
  if (cutOff === 'memory')
    return ' (cut off: the exploration had taken most of the heap Node allows; lower the limits, or give Node more with NODE_OPTIONS=--max-old-space-size=MB)';
  if (cutOff === 'violation') return ' (stopped at the level of the first violation)';
  return ` (cut off at --depth ${depth}: raise it to explore everything)`;
}
