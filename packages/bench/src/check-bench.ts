// `pnpm bench --check`: how fast the model checker explores. exploreTurn over growing bounds,
// each with every invariant on every edge and again with the purity re-runs on one edge in 16;
// states/s and transitions/s (wall and CPU clock), heap per stored node, beside the cost of one
// `step`; an exploration that has not finished after a minute is stopped and reported as such.
// Then checkAgent, what a user runs on an agent of their own, on the files agent of
// docs/check-your-agent.md at growing `maxIterations`.
// `--write` replaces the section between the check-bench markers of docs/benchmarks.md.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism, loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { agentFromModule, checkAgent, exploreTurn, type AgentProperty } from '@turnkit/check';
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

/** One `checkAgent` run on the files agent. */
export interface AgentCheckRun {
  readonly maxIterations: number;
  readonly states: number;
  readonly transitions: number;
  readonly seconds: number;
  readonly cpuSeconds: number;
  /** Peak heap growth over the run, per node (the frontier's worlds included). */
  readonly heapBytesPerNode: number;
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
  /** The load average when the bench started (`loadAverage` is when it finished). */
  readonly loadAverageAtStart?: number;
  /** `checkAgent` on the files agent of docs/check-your-agent.md. */
  readonly agentRuns?: readonly AgentCheckRun[];
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

/** The `maxIterations` the files agent is checked at. */
const AGENT_ITERATIONS = [2, 3] as const;

/** The file of the files agent, as `turnkit check --agent` takes it. */
const FILES_AGENT = join(packageRoot, '..', 'check', 'examples', 'files-agent.ts');

/** `checkAgent` on the files agent and its properties, at each of `AGENT_ITERATIONS`. */
async function runAgentChecks(gc: () => void, log: (line: string) => void): Promise<AgentCheckRun[]> {
  // tsx loads the TypeScript example as `turnkit check --agent` does; only here, so no other bench loads it.
  const { tsImport } = await import('tsx/esm/api');
  const module = (await tsImport(pathToFileURL(FILES_AGENT).href, import.meta.url)) as Record<string, unknown>;
  const agent = agentFromModule(module);
  const properties = module.properties as readonly AgentProperty[];
  const runs: AgentCheckRun[] = [];
  for (const maxIterations of AGENT_ITERATIONS) {
    gc();
    const baseline = process.memoryUsage().heapUsed;
    let peak = baseline;
    const started = performance.now();
    const cpu = process.cpuUsage();
    const result = await checkAgent(
      { ...agent, limits: { ...agent.limits, maxIterations } },
      { properties, onProgress: () => void (peak = Math.max(peak, process.memoryUsage().heapUsed)) },
    );
    const used = process.cpuUsage(cpu);
    if (result.violationCount !== 0 || !result.exhaustive)
      throw new Error(`checkAgent on ${FILES_AGENT} at maxIterations ${maxIterations} was not clean and exhaustive.`);
    const run: AgentCheckRun = {
      maxIterations,
      states: result.states,
      transitions: result.transitions,
      seconds: (performance.now() - started) / 1000,
      cpuSeconds: (used.user + used.system) / 1e6,
      heapBytesPerNode: (peak - baseline) / Math.max(1, result.states),
    };
    log(formatAgentRun(run));
    runs.push(run);
  }
  return runs;
}

function formatAgentRun(run: AgentCheckRun): string {
  return `checkAgent, files agent, maxIterations ${run.maxIterations}: ${n(run.states)} nodes, ${n(run.transitions)} transitions, ${run.seconds.toFixed(1)} s (${run.cpuSeconds.toFixed(1)} s CPU)`;
}

/** Runs the step figure and the explorations; an unfinished bound ends the larger ones of its sample. */
export async function runCheckBench(options: { gc: () => void; log: (line: string) => void }): Promise<CheckBenchFigures> {
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
  const loadAtStart = loadavg()[0] ?? 0;
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
  const agentRuns = await runAgentChecks(options.gc, options.log);
  const after = measure();
  options.log(`step: ${after.toFixed(0)} ns per transition`);
  return {
    agentRuns,
    stepNs: (before + after) / 2,
    stepNsRange: [before, after],
    stepCpuNs: stepCpu.ns / stepCpu.transitions,
    runs,
    loadAverage: loadavg()[0] ?? 0,
    loadAverageAtStart: loadAtStart,
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
  return [`step ${n(figures.stepNs)} ns`, ...figures.runs.map(formatRun), ...(figures.agentRuns ?? []).map(formatAgentRun)].join(
    '\n',
  );
}

export const CHECK_MARKERS = { start: '<!-- check-bench:start -->', end: '<!-- check-bench:end -->' } as const;

/** Transitions per second the issue asks of `exploreTurn` with every invariant on every edge (the purity re-runs on a sample). */
export const TARGET_TRANSITIONS_PER_SECOND = 1_000_000;

/** Seconds the issue asks of the widest bounds' exploration on both cores (the purity re-runs on a sample). */
const TARGET_WIDEST_SECONDS = 5;

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
  const widest = CHECK_BOUNDS[CHECK_BOUNDS.length - 1]!;
  const parallel = figures.runs.find((r) => r.limits === widest && r.workers > 1 && r.puritySample > 1);
  const fiveSeconds =
    parallel === undefined
      ? ''
      : ` The ${limitsText(widest)} exploration on ${parallel.workers} threads with the purity re-runs on a sample ${parallel.finished ? `took ${parallel.seconds.toFixed(1)} s by the wall clock (${parallel.cpuSeconds.toFixed(1)} s of CPU)` : 'did not finish in a minute'}, against the ${TARGET_WIDEST_SECONDS} s asked.`;
  return [
    CHECK_MARKERS.start,
    '## Model checking (`exploreTurn`)',
    '',
    `Measured by \`${command}\` (load average ${figures.loadAverageAtStart === undefined ? '' : `${figures.loadAverageAtStart.toFixed(1)} when it started, `}${figures.loadAverage.toFixed(1)} when it finished, on this 2-core machine shared with other work: wall figures are lowered by other work, CPU figures less so). One \`step\` costs ${n(figures.stepNs)} ns on the mixed stream of the step benchmark${range} (${n(1e9 / figures.stepNs)} a second): the yardstick, since the load changes from run to run; by the CPU clock one step took ${n(figures.stepCpuNs ?? figures.stepNs)} ns in the same runs, and "CPU per transition" is the exploration's CPU time (all threads) per transition in units of that. Every exploration checks every invariant on every edge except the purity re-runs (\`step\` on deep-frozen copies and on a JSON round trip, invariants 2 and 3), which run on the edges the sample column says (in a sampled row the edges of one expanded node in 16, and the parse check, \`parseTurnState\` gives the state back unchanged, on one distinct state in 16), and core's state invariants (invariant 3), which run once per distinct state (with the parse check in the rows of every edge). Nodes are the distinct (state, invariant monitor) pairs stored, each as a 64-bit fingerprint ([model-checking.md](model-checking.md#fingerprints)); "stored bytes" are the fingerprint tables and the links back to the start per node (what the exploration keeps of a node, whatever its state), "heap" the peak heap growth of the calling thread over the run per node (the frontier's states included; with worker threads their heaps are not in it).`,
    '',
    '| limits | purity re-runs | threads | states / nodes | transitions | wall (CPU) | states/s wall (CPU) | transitions/s wall (CPU) | CPU per transition, in steps | stored bytes per node | heap bytes per node |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `Largest bounds of these that finish in a minute: ${largest(1)} with every check on every edge; ${largest(16)} with the purity re-runs on a sample. ${target}${projection}${fiveSeconds}`,
    '',
    ...agentSection(figures.agentRuns ?? []),
    CHECK_PROFILE,
    CHECK_MARKERS.end,
  ].join('\n');
}

/** The lines on `checkAgent`, from its runs (none: no lines). */
function agentSection(runs: readonly AgentCheckRun[]): string[] {
  if (runs.length === 0) return [];
  return [
    "`checkAgent`, what [check-your-agent.md](check-your-agent.md) has a user run on an agent of their own, in the same run: the files agent of that page (`packages/check/examples/files-agent.ts`, two tools, a deny and an allow rule, its two properties and the built-in ones) at growing `maxIterations`, replies of up to 2 calls, core's purity re-runs on the edges of one node in 16 (its defaults), one thread. Nodes are the distinct (turn state, call records, invariant monitor) triples; heap is the calling thread's peak heap growth per node, the frontier's worlds included.",
    '',
    '| maxIterations | nodes | transitions | wall (CPU) | transitions/s wall (CPU) | heap bytes per node |',
    '|---|---|---|---|---|---|',
    ...runs.map(
      (r) =>
        `| ${r.maxIterations} | ${n(r.states)} | ${n(r.transitions)} | ${r.seconds.toFixed(1)} s (${r.cpuSeconds.toFixed(1)} s) | ${n(r.transitions / r.seconds)} (${n(r.transitions / r.cpuSeconds)}) | ${n(r.heapBytesPerNode)} |`,
    ),
    '',
  ];
}

/** Where the time goes: the profile behind the figures, written down when it was taken. */
const CHECK_PROFILE =
  "Where the time goes, by the profile (`node --cpu-prof` on one thread at load average 12 to 15, shares of the exploration's CPU time; `step` counts its calls from the purity re-runs too). `maxIterations 2` with the purity re-runs on every edge: the re-runs (deep-frozen and JSON copies, deep comparisons) 44%, the parse check once per distinct state 15%, garbage collection 14%, `step` 13%, the fingerprints 4%, the history monitor 2%, the alphabet 1%, the other per-edge checks and the loop the rest. `maxIterations 3` with the re-runs on 1 node in 16: `step` 19%, the fingerprints 19%, the re-runs 16%, garbage collection 14%, the other per-edge checks and the loop 13%, the parse check 9%, the history monitor 5%, the alphabet 5%. What was changed, and why: a state's fingerprint is a walk over its structure instead of the SHA-1 digest of its JSON text, and the fingerprints of the fields a successor shares with the state before it (core's `step` copies only what it changes) are reused instead of walked again ([model-checking.md](model-checking.md#fingerprints)): step and fingerprint of 87,183 successor states took 4.5 µs a state over `step`'s 0.7 with the text and digest, 1.2 now (the text is made only for the states the parse check runs on); the alphabet drops repeated events by fingerprint instead of by JSON text (1.7 µs a state less). Before: the state's JSON text and SHA-1 digest were 33% of the sampled `maxIterations 3` exploration, the alphabet's repeats 4%. Kept from before: nodes are 64-bit fingerprints in a typed table (16 to 32 bytes a node), a node's link back to the start is 5 bytes (a path is rebuilt by replaying `step`), the monitor's fingerprint is reused when a step leaves it unchanged, and with a sample the re-runs run on whole nodes (one frozen copy serves every edge of a node). Worker threads keep the states they make: a successor's owner (by fingerprint) gets only its edge's rank and fingerprints, 24 bytes in a transferred typed array, and answers which are new; before, each new node crossed as JSON text and was parsed back. The code before and after these changes, run back to back (maxIterations 3 with the purity re-runs on a sample, from the sources through tsx, load average 10 to 13, CPU time of all threads, two runs each): one thread 10.7 and 11.0 s before, 7.4 and 7.6 s after (1.4 times fewer); two threads 15.4 and 16.8 s before (1.45 to 1.5 times one thread), 8.6 and 9.4 s after (1.15 to 1.25 times one thread).\n\nMeasured by hand after the table's run, not by `pnpm bench --check --write` (the machine was shared: load average 8 to 14), `maxIterations 4, loopThreshold 3, maxOutputRepairs 1` with the purity re-runs on 1 edge in 16 (429,155 states, 543,612 nodes, 2,251,344 transitions, depth 30, the same on one and two threads), back to back, from the sources through tsx, with each thread's CPU time read from /proc (utime and stime of the thread). Before the workers' frontiers were evened out ([model-checking.md](model-checking.md)), two workers: one 27.1 s, the other 0.5 s (it only answered offers), 34.5 s in all with the main thread and V8's helper threads: the second thread gained nothing, as an idle machine had shown (20.9 s on one thread, 23.0 s on two). After: the two workers 14.6 and 15.8 s (they expanded 1,083,891 and 1,167,453 transitions; 10,742 nodes crossed between them, in 6 of the 30 levels), 39.3 s in all; one thread 22.6 s on its main thread, 26.1 s in all. The busiest thread is 15.8 s against one thread's 22.6 (1.43 times shorter; 1.7 times shorter than the busiest before), which is what an idle 2-core machine would show as wall time, plus the waits at each level's barriers: a projection, not a measurement (the wall times here, 71.8 s on two threads and 50.2 s on one, are set by the other work on the machine), and short of the 1.6 times aimed at. The two workers spend 1.35 times one thread's CPU on the same edges (30.4 s against 22.6): they run at once on the machine's two cores (with V8's garbage-collection helpers, 2 s each beside two workers, 1 s beside one thread), and hold a level's offered successors until their owners answer. Starting two workers costs 1.2 s of CPU through tsx (each compiles the sources it loads), 0.3 s from the built files. Through the CLI (`pnpm -s turnkit check --max-iterations 4 --loop-threshold 3 --repairs 1 --purity-sample 16 --workers N` under `/usr/bin/time`, load average 10 to 14): 34.2 s CPU on one thread (82.9 s wall), 38.8 s on two (80.1 s wall). From the built files (`exploreTurn`, load average 10 to 13): 24.4 s CPU on one thread (92,000 transitions a CPU second: a tenth of the 1,000,000 a second asked), 30.5 s on two. Memory: 51.3 stored bytes a node on one thread (the fingerprint tables and each node's link), 82.2 on two (each worker also keeps the fingerprints of the nodes it offered); peak resident memory 372 MB on one thread and 602 MB on two (from the built files). The fingerprints now reuse the fingerprint of a shared object at every path down to depth 4 and each key's by position ([model-checking.md](model-checking.md#fingerprints)): 3.95 objects walked a successor state before, 3.17 after, and 16% less CPU a fingerprint. Not changed: the other per-edge checks (the history monitor, the effect-list and counter checks) and the parse check, which runs once per distinct state (on one in 16 with the sample, as stated above); the alphabet is still made per state.";

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
