// `pnpm bench --check`: how fast the model checker explores. exploreTurn over growing bounds,
// each with every invariant on every edge and again with the purity re-runs on one edge in 16;
// states/s and transitions/s (wall and CPU clock), heap per stored node, beside the cost of one
// `step`; an exploration that has not finished after a minute is stopped and reported as such.
// `--write` replaces the section between the check-bench markers of docs/benchmarks.md.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism, loadavg } from 'node:os';
import { exploreTurn } from '@turnkit/check';
import type { TurnLimitsInput } from '@turnkit/core';
import { measureStep } from './step-bench.js';
import { packageRoot } from './paths.js';

export interface CheckRun {
  readonly limits: TurnLimitsInput;
  readonly puritySample: number;
  /** Worker threads the exploration ran on (1: the caller's thread). */
  readonly workers: number;
  readonly finished: boolean;
  readonly states: number;
  readonly nodes: number;
  readonly transitions: number;
  readonly depth: number;
  readonly seconds: number;
  readonly cpuSeconds: number;
  /** Peak heap growth over the run, per stored node (an upper bound: the frontier's states count too). */
  readonly heapBytesPerNode: number;
  /** The fingerprint tables and path links per stored node (`storedBytes / nodes`). */
  readonly storedBytesPerNode: number;
}

export interface CheckBenchFigures {
  /** One `step` on the step benchmark's mixed stream, measured before and after the explorations (the mean). */
  readonly stepNs: number;
  /** The two step measurements, before and after. */
  readonly stepNsRange?: readonly [number, number];
  /** One `step` by the CPU clock (the same runs): the yardstick of "CPU per transition, in steps". */
  readonly stepCpuNs?: number;
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

function explore(limits: TurnLimitsInput, puritySample: number, workers: number, gc: () => void): CheckRun {
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
      workers,
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
    workers,
    finished: finished && result?.exhaustive === true,
    states: result?.states ?? reached.states,
    nodes,
    transitions: result?.transitions ?? 0,
    depth: result?.depth ?? reached.depth,
    seconds,
    cpuSeconds: (used.user + used.system) / 1e6,
    heapBytesPerNode: (peak - baseline) / Math.max(1, nodes),
    storedBytesPerNode: (result?.storedBytes ?? 0) / Math.max(1, nodes),
  };
}

/** Runs the step figure and the explorations; an unfinished bound ends the larger ones of its sample. */
export function runCheckBench(options: { gc: () => void; log: (line: string) => void }): CheckBenchFigures {
  const stepCpu = { ns: 0, transitions: 0 };
  /** The step benchmark, by the wall clock (its median batch) and by the CPU clock (all its batches, the warm-up included). */
  const measure = (): number => {
    const cpu = process.cpuUsage();
    const figure = measureStep(50_000, 5);
    const used = process.cpuUsage(cpu);
    stepCpu.ns += (used.user + used.system) * 1000;
    stepCpu.transitions += (figure.transitions * 6) / 5;
    return figure.nsPerTransition;
  };
  const before = measure();
  options.log(`step: ${before.toFixed(0)} ns per transition`);
  const runs: CheckRun[] = [];
  const threads = availableParallelism();
  const settings = [
    { puritySample: 1, workers: 1 },
    { puritySample: 16, workers: 1 },
    ...(threads > 1
      ? [
          { puritySample: 1, workers: threads },
          { puritySample: 16, workers: threads },
        ]
      : []),
  ];
  for (const { puritySample, workers } of settings) {
    for (const limits of CHECK_BOUNDS) {
      const run = explore(limits, puritySample, workers, options.gc);
      options.log(formatRun(run));
      runs.push(run);
      if (!run.finished) break;
    }
  }
  const after = measure();
  options.log(`step: ${after.toFixed(0)} ns per transition`);
  return {
    stepNs: (before + after) / 2,
    stepNsRange: [before, after],
    stepCpuNs: stepCpu.ns / stepCpu.transitions,
    runs,
    loadAverage: loadavg()[0] ?? 0,
  };
}

const n = (x: number): string => Math.round(x).toLocaleString('en-US');
const limitsText = (limits: TurnLimitsInput): string =>
  Object.entries(limits)
    .map(([k, v]) => `${k} ${String(v)}`)
    .join(', ');

function formatRun(run: CheckRun): string {
  return `${limitsText(run.limits)}, purity on 1 edge in ${run.puritySample}, ${run.workers} thread${run.workers === 1 ? '' : 's'}: ${run.finished ? 'finished' : 'stopped after a minute'}, ${n(run.states)} states, ${n(run.transitions)} transitions, ${run.seconds.toFixed(1)} s (${run.cpuSeconds.toFixed(1)} s CPU)`;
}

export function formatCheckTerminal(figures: CheckBenchFigures): string {
  return [`step ${n(figures.stepNs)} ns`, ...figures.runs.map(formatRun)].join('\n');
}

export const CHECK_MARKERS = { start: '<!-- check-bench:start -->', end: '<!-- check-bench:end -->' } as const;

/** Transitions per second the issue asks of `exploreTurn` with every invariant on every edge (the purity re-runs on a sample). */
export const TARGET_TRANSITIONS_PER_SECOND = 1_000_000;

/** Nanoseconds of one `step` on this machine when idle (docs/benchmarks.md's step figure then): the projection's yardstick. */
const IDLE_STEP_NS = 230;

/** The section of docs/benchmarks.md. */
export function renderCheckSection(figures: CheckBenchFigures, command: string): string {
  const rows = figures.runs.map((r) => {
    const perSecond = (count: number, s: number): string => (r.finished && s > 0 ? n(count / s) : '—');
    const steps =
      r.finished && r.transitions > 0
        ? ((r.cpuSeconds * 1e9) / r.transitions / (figures.stepCpuNs ?? figures.stepNs)).toFixed(1)
        : '—';
    return `| ${limitsText(r.limits)} | ${r.puritySample === 1 ? 'every edge' : `1 edge in ${r.puritySample}`} | ${r.workers} | ${r.finished ? `${n(r.states)} / ${n(r.nodes)}` : `stopped after a minute at depth ${r.depth}`} | ${r.finished ? n(r.transitions) : '—'} | ${r.seconds.toFixed(1)} s (${r.cpuSeconds.toFixed(1)} s) | ${perSecond(r.states, r.seconds)} (${perSecond(r.states, r.cpuSeconds)}) | ${perSecond(r.transitions, r.seconds)} (${perSecond(r.transitions, r.cpuSeconds)}) | ${steps} | ${r.finished ? n(r.storedBytesPerNode) : '—'} | ${r.finished ? n(r.heapBytesPerNode) : '—'} |`;
  });
  const largest = (sample: number): string => {
    const done = figures.runs.filter((r) => r.puritySample === sample && r.finished);
    const last = done.sort((a, b) => a.transitions - b.transitions)[done.length - 1];
    return last === undefined ? 'none of the bounds above' : `${limitsText(last.limits)} (${n(last.transitions)} transitions)`;
  };
  const finished = figures.runs.filter((r) => r.finished && r.seconds > 0);
  const best = finished.sort((a, b) => b.transitions / b.seconds - a.transitions / a.seconds)[0];
  const range =
    figures.stepNsRange === undefined
      ? ''
      : ` (${n(figures.stepNsRange[0])} before the explorations, ${n(figures.stepNsRange[1])} after)`;
  const target =
    best === undefined
      ? 'No exploration finished.'
      : `The fastest run here: ${n(best.transitions / best.seconds)} transitions/s by the wall clock (${limitsText(best.limits)}, ${best.workers} thread${best.workers === 1 ? '' : 's'}, purity ${best.puritySample === 1 ? 'on every edge' : `on 1 edge in ${best.puritySample}`}), ${((100 * best.transitions) / best.seconds / TARGET_TRANSITIONS_PER_SECOND).toFixed(1)}% of the ${n(TARGET_TRANSITIONS_PER_SECOND)} asked; at this run's step cost that rate is ${(1e9 / TARGET_TRANSITIONS_PER_SECOND / figures.stepNs).toFixed(2)} steps of wall time per transition.`;
  const cheapest = finished
    .filter((r) => r.transitions > 0)
    .map((r) => ({ r, steps: (r.cpuSeconds * 1e9) / r.transitions / (figures.stepCpuNs ?? figures.stepNs) }))
    .sort((a, b) => a.steps - b.steps)[0];
  const projection =
    cheapest === undefined
      ? ''
      : ` The least CPU per transition here is ${cheapest.steps.toFixed(1)} steps (${limitsText(cheapest.r.limits)}, purity ${cheapest.r.puritySample === 1 ? 'on every edge' : `on 1 edge in ${cheapest.r.puritySample}`}, ${cheapest.r.workers} thread${cheapest.r.workers === 1 ? '' : 's'}); at ${IDLE_STEP_NS} ns a step (the figure of an idle machine) that is ${n(1e9 / (cheapest.steps * IDLE_STEP_NS))} transitions/s a core: a projection, not a measurement.`;
  return [
    CHECK_MARKERS.start,
    '## Model checking (`exploreTurn`)',
    '',
    `Measured by \`${command}\` (load average ${figures.loadAverage.toFixed(1)} on this 2-core machine when it finished: wall figures are lowered by other work, CPU figures less so). One \`step\` costs ${n(figures.stepNs)} ns on the mixed stream of the step benchmark${range} (${n(1e9 / figures.stepNs)} a second): the yardstick, since the load changes from run to run; by the CPU clock one step took ${n(figures.stepCpuNs ?? figures.stepNs)} ns in the same runs, and "CPU per transition" is the exploration's CPU time (all threads) per transition in units of that. Every exploration checks every invariant on every edge except the purity re-runs (\`step\` on deep-frozen copies and on a JSON round trip, invariants 2 and 3), which run on the edges the sample column says (in a sampled row the edges of one expanded node in 16, and the parse check, \`parseTurnState\` gives the state back unchanged, on one distinct state in 16), and core's state invariants (invariant 3), which run once per distinct state (with the parse check in the rows of every edge). Nodes are the distinct (state, invariant monitor) pairs stored, each as a 64-bit fingerprint ([model-checking.md](model-checking.md#fingerprints)); "stored bytes" are the fingerprint tables and the links back to the start per node (what the exploration keeps of a node, whatever its state), "heap" the peak heap growth of the calling thread over the run per node (the frontier's states included; with worker threads their heaps are not in it).`,
    '',
    '| limits | purity re-runs | threads | states / nodes | transitions | wall (CPU) | states/s wall (CPU) | transitions/s wall (CPU) | CPU per transition, in steps | stored bytes per node | heap bytes per node |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `Largest bounds of these that finish in a minute: ${largest(1)} with every check on every edge; ${largest(16)} with the purity re-runs on a sample. ${target}${projection}`,
    '',
    CHECK_PROFILE,
    CHECK_MARKERS.end,
  ].join('\n');
}

/** Where the time goes: the profile behind the figures, written down when it was taken. */
const CHECK_PROFILE =
  "Where the time goes, by the profile (`node --cpu-prof` of the `maxIterations 2` exploration on one thread, load average above 10, shares of the exploration's time). With the purity re-runs on every edge: the re-runs (`step` twice more, a deep-frozen and a JSON copy, deep comparisons) 57%, the parse check once per distinct state 13%, the state's JSON text and its fingerprint 12% (SHA-1 6%), `step` itself 4% (13% with the re-runs' two more), garbage collection 14%, the alphabet 4%, the history monitor and the other per-edge checks the rest. With the re-runs and the parse check on a sample of 16, before whole nodes were sampled: the re-runs 21% (a frozen copy of the state per sampled edge), `step` 22%, the state's JSON text and fingerprint 22%, garbage collection 18%, the parse check 6%, the alphabet 6%, the history monitor 6%. What was changed, and why: nodes are 64-bit fingerprints in a typed table instead of SHA-1 texts in a `Set` (16 to 32 bytes a node instead of a 28-character string and its entry), a node's link back to the start is 5 bytes in a typed array instead of an object holding its event (a path is rebuilt by replaying `step`), the monitor's fingerprint is reused when a step leaves it unchanged, the parse check takes the text the fingerprint was made from, and with a sample the parse check runs on the sampled states and the re-runs on whole nodes (one frozen copy serves every edge of a node). Worker threads split each level by the states' fingerprints, and a worker offers each node to its owner once (a node it has offered or holds is dropped where it is found: without that, two workers took twice the CPU time of one); they still take more CPU time than one thread (maxIterations 3 with the sample, measured apart at load average 6 to 9: 14.7 s against 9.4 s), for handing new nodes over as JSON text, parsing them back and collecting two heaps, so on this shared 2-core machine they gain wall time only when the second core is free.";

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
