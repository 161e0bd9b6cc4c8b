// `pnpm bench --check`: how fast the model checker explores. exploreTurn over growing bounds,
// each with every invariant on every edge and again with the purity re-runs on one edge in 16;
// states/s and transitions/s (wall and CPU clock), heap per stored node, beside the cost of one
// `step`; an exploration that has not finished after a minute is stopped and reported as such.
// `--write` replaces the section between the check-bench markers of docs/benchmarks.md.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { exploreTurn } from '@turnkit/check';
import type { TurnLimitsInput } from '@turnkit/core';
import { measureStep } from './step-bench.js';
import { packageRoot } from './paths.js';

export interface CheckRun {
  readonly limits: TurnLimitsInput;
  readonly puritySample: number;
  readonly finished: boolean;
  readonly states: number;
  readonly nodes: number;
  readonly transitions: number;
  readonly depth: number;
  readonly seconds: number;
  readonly cpuSeconds: number;
  /** Peak heap growth over the run, per stored node (an upper bound: the frontier's states count too). */
  readonly heapBytesPerNode: number;
}

export interface CheckBenchFigures {
  readonly stepNs: number;
  readonly runs: readonly CheckRun[];
  readonly loadAverage: number;
}

/** The bounds explored, smallest first: `turnkit check`'s defaults, then larger ones. */
export const CHECK_BOUNDS: readonly TurnLimitsInput[] = [
  { maxIterations: 2, loopThreshold: 2, maxOutputRepairs: 1 },
  { maxIterations: 3, loopThreshold: 3, maxOutputRepairs: 1 },
  { maxIterations: 4, loopThreshold: 3, maxOutputRepairs: 1 },
];

const MINUTE_MS = 60_000;

class OutOfTime extends Error {}

function explore(limits: TurnLimitsInput, puritySample: number, gc: () => void): CheckRun {
  gc();
  const baseline = process.memoryUsage().heapUsed;
  let peak = baseline;
  let reached = { states: 0, depth: 0 };
  const started = performance.now();
  const cpu = process.cpuUsage();
  let finished = true;
  let result: ReturnType<typeof exploreTurn> | undefined;
  try {
    result = exploreTurn({
      limits,
      maxDepth: 80,
      puritySample,
      onProgress: (p) => {
        peak = Math.max(peak, process.memoryUsage().heapUsed);
        reached = { states: p.states, depth: p.depth };
        if (performance.now() - started > MINUTE_MS) throw new OutOfTime();
      },
    });
  } catch (error) {
    if (!(error instanceof OutOfTime)) throw error;
    finished = false;
  }
  const used = process.cpuUsage(cpu);
  const seconds = (performance.now() - started) / 1000;
  if (result !== undefined && result.violationCount !== 0)
    throw new Error(`exploreTurn found ${result.violationCount} violations under ${JSON.stringify(limits)}; fix them first.`);
  const nodes = result?.nodes ?? 0;
  return {
    limits,
    puritySample,
    finished: finished && result?.exhaustive === true,
    states: result?.states ?? reached.states,
    nodes,
    transitions: result?.transitions ?? 0,
    depth: result?.depth ?? reached.depth,
    seconds,
    cpuSeconds: (used.user + used.system) / 1e6,
    heapBytesPerNode: (peak - baseline) / Math.max(1, nodes),
  };
}

/** Runs the step figure and the explorations; an unfinished bound ends the larger ones of its sample. */
export function runCheckBench(options: { gc: () => void; log: (line: string) => void }): CheckBenchFigures {
  const step = measureStep(50_000, 5);
  options.log(`step: ${step.nsPerTransition.toFixed(0)} ns per transition`);
  const runs: CheckRun[] = [];
  for (const puritySample of [1, 16]) {
    for (const limits of CHECK_BOUNDS) {
      const run = explore(limits, puritySample, options.gc);
      options.log(formatRun(run));
      runs.push(run);
      if (!run.finished) break;
    }
  }
  return { stepNs: step.nsPerTransition, runs, loadAverage: loadavg()[0] ?? 0 };
}

const n = (x: number): string => Math.round(x).toLocaleString('en-US');
const limitsText = (limits: TurnLimitsInput): string =>
  Object.entries(limits)
    .map(([k, v]) => `${k} ${String(v)}`)
    .join(', ');

function formatRun(run: CheckRun): string {
  return `${limitsText(run.limits)}, purity on 1 edge in ${run.puritySample}: ${run.finished ? 'finished' : 'stopped after a minute'}, ${n(run.states)} states, ${n(run.transitions)} transitions, ${run.seconds.toFixed(1)} s (${run.cpuSeconds.toFixed(1)} s CPU)`;
}

export function formatCheckTerminal(figures: CheckBenchFigures): string {
  return [`step ${n(figures.stepNs)} ns`, ...figures.runs.map(formatRun)].join('\n');
}

export const CHECK_MARKERS = { start: '<!-- check-bench:start -->', end: '<!-- check-bench:end -->' } as const;

/** The section of docs/benchmarks.md. */
export function renderCheckSection(figures: CheckBenchFigures, command: string): string {
  const rows = figures.runs.map((r) => {
    const perSecond = (count: number, s: number): string => (r.finished && s > 0 ? n(count / s) : '—');
    return `| ${limitsText(r.limits)} | ${r.puritySample === 1 ? 'every edge' : `1 edge in ${r.puritySample}`} | ${r.finished ? `${n(r.states)} / ${n(r.nodes)}` : `stopped after a minute at depth ${r.depth}`} | ${r.finished ? n(r.transitions) : '—'} | ${r.seconds.toFixed(1)} s (${r.cpuSeconds.toFixed(1)} s) | ${perSecond(r.states, r.seconds)} (${perSecond(r.states, r.cpuSeconds)}) | ${perSecond(r.transitions, r.seconds)} (${perSecond(r.transitions, r.cpuSeconds)}) | ${r.finished ? n(r.heapBytesPerNode) : '—'} |`;
  });
  const largest = (sample: number): string => {
    const done = figures.runs.filter((r) => r.puritySample === sample && r.finished);
    const last = done[done.length - 1];
    return last === undefined ? 'none of the bounds above' : `${limitsText(last.limits)} (${n(last.transitions)} transitions)`;
  };
  return [
    CHECK_MARKERS.start,
    '## Model checking (`exploreTurn`)',
    '',
    `Measured by \`${command}\` (load average ${figures.loadAverage.toFixed(1)} on this 2-core machine when it finished: wall figures are lowered by other work, CPU figures less so). One \`step\` costs ${n(figures.stepNs)} ns on the mixed stream of the step benchmark (${n(1e9 / figures.stepNs)} a second). Every exploration checks every invariant on every edge except the purity re-runs (\`step\` on deep-frozen copies and on a JSON round trip, invariants 2 and 3), which run on the edges the sample column says, and the checks that depend on a state alone (core's state invariants and the parse check, invariant 3), which run once per distinct state. Nodes are the distinct (state, invariant monitor) pairs stored; heap is the peak growth over the run per node (the frontier's states and the key tables included).`,
    '',
    '| limits | purity re-runs | states / nodes | transitions | wall (CPU) | states/s wall (CPU) | transitions/s wall (CPU) | heap bytes per node |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `Largest bounds of these that finish in a minute: ${largest(1)} with every check on every edge; ${largest(16)} with the purity re-runs on a sample.`,
    '',
    "Where the time goes, by the profile (`node --cpu-prof` of the `maxIterations 2` exploration with the purity re-runs on a sample, load average above 10): `parseTurnState`'s check, once per distinct state, about a third; `step` about a tenth; the other per-edge checks (effects, counters, the history monitor, the sampled re-runs) about a seventh; garbage collection about an eighth; the node keys (a state's JSON text and its SHA-1 digest, and the digest of the monitor) about a sixth; the alphabet the rest. Keys made of exact ids per distinct JSON value, kept per object, were built and measured: 2.4 µs a state against 5.3 µs for its text and digest, but no faster explorations end to end (maxIterations 2, fresh processes: 3.09 and 3.04 s of CPU against 3.38 and 3.17 with the re-runs on a sample) and 15–45% more heap per node; they were left out. With every edge checked, the purity re-runs (`step` twice more, a deep-frozen and a JSON copy, deep comparisons) take about half of the time. The explorations run on one thread. The parse check as a second pass on a worker thread (each new state's JSON text handed over, joined at the end of each depth level, the same results) was built and measured on this machine: no gain (12.8 and 13.0 s against 12.1 and 13.6 s for maxIterations 2 with the purity re-runs on a sample, load average 5 to 7), since handing the texts over cost the explorer about a third of what the check had cost it and the second core was busy with other work; it was left out. Splitting the frontier across workers was not built: `step` and the alphabet are functions the caller passes (the tests' broken steps, an agent's rules), which cannot cross to another thread, and every edge's state would cross as a structured clone or a JSON text, as dear as checking it.",
    CHECK_MARKERS.end,
  ].join('\n');
}

const docPath = (): string => join(packageRoot, '..', '..', 'docs', 'benchmarks.md');

/** The check section of docs/benchmarks.md as it is, or null. */
export function currentCheckSection(): string | null {
  const doc = readFileSync(docPath(), 'utf8');
  const start = doc.indexOf(CHECK_MARKERS.start);
  const end = doc.indexOf(CHECK_MARKERS.end);
  return start === -1 || end === -1 ? null : doc.slice(start, end + CHECK_MARKERS.end.length);
}

/** `doc` with its check section replaced by `section` (appended before "## Reproduce" when it has none). */
export function withCheckSection(doc: string, section: string | null): string {
  if (section === null) return doc;
  const start = doc.indexOf(CHECK_MARKERS.start);
  const end = doc.indexOf(CHECK_MARKERS.end);
  if (start !== -1 && end !== -1) return doc.slice(0, start) + section + doc.slice(end + CHECK_MARKERS.end.length);
  const at = doc.indexOf('## Reproduce');
  return at === -1 ? `${doc.trimEnd()}\n\n${section}\n` : `${doc.slice(0, at)}${section}\n\n${doc.slice(at)}`;
}

export function writeCheckSection(section: string): string {
  const path = docPath();
  writeFileSync(path, withCheckSection(readFileSync(path, 'utf8'), section));
  return path;
}
