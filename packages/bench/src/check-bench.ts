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
import { agentFromModule, checkAgent, eventsFor, exploreTurn, type AgentProperty } from '@turnkit/check';
import { FingerprintSet, ValueFingerprint } from '@turnkit/check/internal';
import { createTurn, step, type TurnLimitsInput } from '@turnkit/core';
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

/** The exploration's loop alone over one bound (`bareExploration`). */
export interface BareRun {
  readonly limits: TurnLimitsInput;
  readonly states: number;
  readonly transitions: number;
  readonly seconds: number;
  readonly cpuSeconds: number;
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
  /** The exploration's loop alone, on the widest bounds. */
  readonly bare?: BareRun;
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

/**
 * `exploreTurn`'s loop with nothing checked, on one thread: breadth-first over the distinct states
 * of `limits`, with its alphabet, core's `step`, its state fingerprints (the shared fields' reused)
 * and its table, and no invariant, monitor, copy or path. What an edge costs before any check: a
 * floor under the exploration's rate. Its states must be the exploration's.
 */
export function bareExploration(limits: TurnLimitsInput, gc: () => void): BareRun {
  gc();
  const started = performance.now();
  const cpu = process.cpuUsage();
  const initial = createTurn({ id: 'turn-1', limits });
  const hash = new ValueFingerprint({ reuse: true });
  const seen = new FingerprintSet();
  hash.value(initial);
  seen.add(hash.hi, hash.lo);
  let frontier = [initial];
  let transitions = 0;
  while (frontier.length > 0) {
    const next = [];
    for (const state of frontier)
      for (const event of eventsFor(state)) {
        transitions += 1;
        const after = step(state, event)[0];
        if (after === state) continue;
        hash.value(after);
        if (seen.add(hash.hi, hash.lo)) next.push(after);
      }
    frontier = next;
  }
  const used = process.cpuUsage(cpu);
  return {
    limits,
    states: seen.size,
    transitions,
    seconds: (performance.now() - started) / 1000,
    cpuSeconds: (used.user + used.system) / 1e6,
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
  const widest = CHECK_BOUNDS[CHECK_BOUNDS.length - 1]!;
  const bare = bareExploration(widest, options.gc);
  const explored = runs.find((r) => r.limits === widest && r.finished);
  if (explored !== undefined && explored.states !== bare.states)
    throw new Error(`The bare loop met ${bare.states} states of ${limitsText(widest)}, exploreTurn ${explored.states}.`);
  options.log(formatBare(bare));
  const agentRuns = await runAgentChecks(options.gc, options.log);
  const after = measure();
  options.log(`step: ${after.toFixed(0)} ns per transition`);
  return {
    agentRuns,
    bare,
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

function formatBare(run: BareRun): string {
  return `the loop alone, nothing checked, ${limitsText(run.limits)}: ${n(run.states)} states, ${n(run.transitions)} transitions, ${run.seconds.toFixed(1)} s (${run.cpuSeconds.toFixed(1)} s CPU)`;
}

export function formatCheckTerminal(figures: CheckBenchFigures): string {
  return [
    `step ${n(figures.stepNs)} ns`,
    ...figures.runs.map(formatRun),
    ...(figures.bare === undefined ? [] : [formatBare(figures.bare)]),
    ...(figures.agentRuns ?? []).map(formatAgentRun),
  ].join('\n');
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
    ...bareSection(figures),
    ...agentSection(figures.agentRuns ?? []),
    CHECK_PROFILE,
    CHECK_MARKERS.end,
  ].join('\n');
}

/** The lines on the exploration's loop alone, beside the explorations of the same bounds (none: no lines). */
function bareSection(figures: CheckBenchFigures): string[] {
  const bare = figures.bare;
  if (bare === undefined || bare.transitions === 0) return [];
  const usPerEdge = (seconds: number, transitions: number): string => ((seconds * 1e6) / transitions).toFixed(2);
  const same = figures.runs.filter((r) => r.limits === bare.limits && r.finished && r.workers === 1);
  const beside = same
    .map(
      (r) =>
        `${usPerEdge(r.cpuSeconds, r.transitions)} µs with every check and the purity re-runs on ${r.puritySample === 1 ? 'every edge' : `1 node in ${r.puritySample}`}`,
    )
    .join(', ');
  const perSecond = bare.transitions / bare.cpuSeconds;
  return [
    `The exploration's loop alone, nothing checked (\`bareExploration\` in \`packages/bench/src/check-bench.ts\`: the same alphabet, core's \`step\`, the same state fingerprints and table; no invariant, monitor, copy or link back), ${limitsText(bare.limits)}, one thread, in the same run: ${n(bare.states)} states (the exploration's), ${n(bare.transitions)} transitions (an edge that gives its state back is not fingerprinted; the explorations count ${n(same[0]?.transitions ?? 0)}, as they take the edges of each (state, monitor) node), ${bare.seconds.toFixed(1)} s (${bare.cpuSeconds.toFixed(1)} s of CPU): ${usPerEdge(bare.cpuSeconds, bare.transitions)} µs of CPU an edge, ${n(perSecond)} transitions a CPU second${beside === '' ? '' : `, against ${beside} (one thread, CPU)`}. This is a floor under the rate of \`exploreTurn\` on this machine: with no check at all and the edges shared perfectly between two cores, ${n(2 * perSecond)} transitions/s.`,
    '',
  ];
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
  "Where the time goes, by the profile (`node --cpu-prof packages/cli/dist/bin.js check --max-iterations N --loop-threshold 3 --repairs 1 [--purity-sample 16]` on one thread of an idle machine, shares of that thread's time; taken when this was written, not by the bench). `maxIterations 4` with the purity re-runs on 1 node in 16: the per-edge checks 23% (the purity run 12%, the history monitor 7%, the effect list 2%), the fingerprints 18%, `step` 17%, the node table with the checks of each new distinct state 14% (the parse check 7%, core's state invariants 1%), garbage collection 13%, the alphabet 8%, the loop itself 3%. `maxIterations 3` with the re-runs on every edge: the purity run 40% (the state's JSON text and its parse, the frozen copy, the run and the comparison), the parse check on every distinct state 23% (`parseTurnState` and `JSON.parse` of the state's text, and the comparison), `step` 7%, the fingerprints 5%, garbage collection 5%, the alphabet 3%. What was changed, and why, with the figures before and after: [model-checking.md](model-checking.md) (the fingerprints, the one purity run, the worker threads).";

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
