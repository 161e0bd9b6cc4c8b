// One benchmark run: turnkit systems (and, unless quick, the peers) timed side by side, then the
// turnkit-only figures. Used by main.ts (`pnpm bench`) and by the package's test (quick, in-process).
import { cpus, loadavg } from 'node:os';
import { readFileSync, writeFileSync } from 'node:fs';
import { measureExplore } from './explore.js';
import { floorSystem } from './floor.js';
import type { AllocationOptions } from './allocation.js';
import { timeTurns } from './harness.js';
import { measureLongTurn } from './long-turn.js';
import { profileTurns } from './profile.js';
import { ensurePeers } from './peer-install.js';
import { aiSdkDeltaStream, loadPeerSystems } from './peers.js';
import { renderMarkdown, withTurnSections, type BenchReport } from './report.js';
import type { TurnReport } from './report-types.js';
import type { ProfileFigure } from './profile.js';
import { measureStep } from './step-bench.js';
import { DURABLE_END, DURABLE_START } from './durable-report.js';
import { LONG } from './durable-long.js';
import { benchmarksDoc, currentSection, type Markers, withSection } from './doc-sections.js';
import { STORE } from './store-report.js';
import { currentCheckSection, withCheckSection } from './check-bench.js';
import { THREAD } from './thread-report.js';
import { deltasPerSecond, measureSuspendedHeap, turnkitDeltaStream, turnkitSystems } from './turnkit.js';
import { definedProps } from '@turnkit/core/internal';

export interface BenchSettings {
  /** turnkit systems only, small counts (CI). */
  readonly quick: boolean;
  readonly rounds: number;
  readonly turnsPerRound: number;
  readonly warmupTurns: number;
  /** The command line recorded in the report. */
  readonly command: string;
  /** A full garbage collection (`global.gc` under `node --expose-gc`), for the heap figure. */
  readonly gc: () => void;
  /** Progress lines (stderr in the CLI). */
  readonly log: (line: string) => void;
  /** Scale of the turnkit-only figures; defaults depend on `quick`. */
  readonly figures?: Partial<FigureSizes>;
  /** How the allocation per turn is measured (allocation.ts's defaults where left out). */
  readonly allocation?: Partial<AllocationOptions>;
}

export interface FigureSizes {
  readonly suspendedTurns: number;
  readonly stepTurns: number;
  readonly streamDeltas: number;
  readonly exploreMaxIterations: number;
  readonly exploreMaxDepth: number;
  /** Tool rounds of the long turn `step` is timed over, per 1,000-round block. */
  readonly longTurnRounds: number;
  /** Turns of the reference system under the CPU profiler (0: no profile). */
  readonly profileTurns: number;
}

const FULL: FigureSizes = {
  suspendedTurns: 10_000,
  stepTurns: 50_000,
  streamDeltas: 10_000,
  exploreMaxIterations: 2,
  exploreMaxDepth: 40,
  longTurnRounds: 50_000,
  profileTurns: 20_000,
};
const QUICK: FigureSizes = {
  suspendedTurns: 500,
  stepTurns: 2_000,
  streamDeltas: 5_000,
  exploreMaxIterations: 1,
  exploreMaxDepth: 20,
  longTurnRounds: 5_000,
  profileTurns: 0,
};

/** What every report starts with: when, where, how loaded, by which command, and how long it took. */
function header(settings: BenchSettings, load: BenchReport['load'], started: number, quick: boolean) {
  return {
    date: new Date().toISOString().slice(0, 10),
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown CPU',
    load,
    command: settings.command,
    quick,
    seconds: (performance.now() - started) / 1000,
  };
}

/** Runs the benchmark and returns what it measured; throws if any system fails verification. */
export async function runBench(settings: BenchSettings): Promise<BenchReport> {
  const started = performance.now();
  const load = { average: loadavg()[0] ?? Number.NaN, cores: cpus().length };
  const sizes = { ...(settings.quick ? QUICK : FULL), ...settings.figures };
  const { log } = settings;
  // The turnkit-only figures come first, in a heap the peers have not grown yet (LangChain alone
  // retains tens of MB, which makes every later garbage collection dearer for whoever runs then).
  log(`Heap per suspended turn (${sizes.suspendedTurns} turns parked for approval)…`);
  const suspendedHeap = await measureSuspendedHeap(sizes.suspendedTurns, settings.gc);
  log(`step per transition (${sizes.stepTurns} turns × 5 batches)…`);
  const step = measureStep(sizes.stepTurns, 5);
  log(`step over one turn of ${sizes.longTurnRounds} tool rounds…`);
  const longTurn = measureLongTurn(sizes.longTurnRounds);
  log('exploreTurn…');
  const explore = measureExplore(
    { maxIterations: sizes.exploreMaxIterations, loopThreshold: 2, maxOutputRepairs: 1 },
    sizes.exploreMaxDepth,
  );
  log(`Streaming throughput (${sizes.streamDeltas} deltas)…`);
  const turnkitPerSecond = await deltasPerSecond(
    'turnkit streamTurn',
    await turnkitDeltaStream(sizes.streamDeltas),
    sizes.streamDeltas,
    10,
  );
  const systems = [...turnkitSystems(), floorSystem];
  const profile = await profileReference(systems, sizes.profileTurns, log);
  let aiSdkPerSecond: number | undefined;
  if (!settings.quick) {
    ensurePeers(settings.log);
    aiSdkPerSecond = await deltasPerSecond(
      'AI SDK 6 streamText',
      await aiSdkDeltaStream(sizes.streamDeltas),
      sizes.streamDeltas,
      10,
    );
    systems.push(...(await loadPeerSystems()));
  }
  const turns = await timeSystems(systems, settings);
  return {
    ...header(settings, load, started, settings.quick),
    turns,
    suspendedHeap,
    step,
    streaming: {
      deltas: sizes.streamDeltas,
      turnkitPerSecond,
      ...definedProps({ aiSdkPerSecond }),
    },
    explore,
    longTurn,
    ...definedProps({ profile }),
  };
}

/**
 * The first (reference) system under the CPU profiler for `turns` turns (none when 0). Run before
 * any peer is loaded: some switch on async hooks for the whole process.
 */
async function profileReference(
  systems: Parameters<typeof timeTurns>[0],
  turns: number,
  log: (line: string) => void,
): Promise<ProfileFigure | undefined> {
  const reference = systems[0];
  if (turns <= 0 || reference === undefined) return undefined;
  log(`Profiling ${turns} turns of ${reference.name}…`);
  return profileTurns(reference, turns);
}

/** Every system timed side by side: warm-up turns each, then interleaved rounds (progress on the log). */
async function timeSystems(systems: Parameters<typeof timeTurns>[0], settings: BenchSettings): ReturnType<typeof timeTurns> {
  const { log } = settings;
  log(
    `Timing ${systems.map((s) => s.name).join(', ')}: ${settings.warmupTurns} warm-up turns each, then ${settings.rounds} interleaved rounds of ${settings.turnsPerRound} turns.`,
  );
  return timeTurns(systems, {
    warmupTurns: settings.warmupTurns,
    rounds: settings.rounds,
    turnsPerRound: settings.turnsPerRound,
    gc: settings.gc,
    ...definedProps({ allocation: settings.allocation }),
    onRound: (round) => {
      if (round % 10 === 0 || round === settings.rounds) log(`  round ${round}/${settings.rounds}`);
    },
  });
}

/**
 * The per-turn comparison alone (`pnpm bench --per-turn`): `step`'s cost per transition, the
 * reference system's profile, then every system (peers included) timed side by side, as a full
 * run does them, without the turnkit-only figures.
 */
export async function runTurnBench(settings: BenchSettings): Promise<TurnReport> {
  const started = performance.now();
  const load = { average: loadavg()[0] ?? Number.NaN, cores: cpus().length };
  const sizes = { ...FULL, ...settings.figures };
  const { log } = settings;
  log(`step per transition (${sizes.stepTurns} turns × 5 batches)…`);
  const step = measureStep(sizes.stepTurns, 5);
  const systems = [...turnkitSystems(), floorSystem];
  const profile = await profileReference(systems, sizes.profileTurns, log);
  ensurePeers(settings.log);
  systems.push(...(await loadPeerSystems()));
  const turns = await timeSystems(systems, settings);
  return {
    ...header(settings, load, started, false),
    turns,
    step,
    ...definedProps({ profile }),
  };
}

/** Rewrites the per-turn parts of docs/benchmarks.md with a `--per-turn` run (`withTurnSections`); returns its path. */
export function writeTurnSections(report: TurnReport): string {
  const path = benchmarksDoc();
  writeFileSync(path, withTurnSections(readFileSync(path, 'utf8'), report));
  return path;
}

/** The sections other commands write (`pnpm bench --store --write`, `--durable`, …), in page order. */
const KEPT: readonly Markers[] = [STORE, { start: DURABLE_START, end: DURABLE_END }, LONG];

/** Rewrites docs/benchmarks.md (at the repository root) with the report; returns its path. */
export function writeBenchmarksDoc(report: BenchReport): string {
  // Other commands' sections are kept as they are.
  const page = KEPT.reduce((doc, markers) => withSection(doc, currentSection(markers), markers), renderMarkdown(report));
  const path = benchmarksDoc();
  writeFileSync(path, withSection(withCheckSection(page, currentCheckSection()), currentSection(THREAD), THREAD));
  return path;
}
