#!/usr/bin/env node
// `pnpm bench`: turnkit against its peers on one scenario, in one process run.
//   pnpm bench            full comparison (installs the peers into packages/bench/.peers on first use)
//   pnpm bench --write    same, and rewrites docs/benchmarks.md
//   pnpm bench --per-turn the time, CPU and allocation per turn against the peers only (--write: its parts of the page)
//   pnpm bench --quick    turnkit and the floor only, small counts (CI keeps the harness working; no timing
//                         asserted; the allocation per turn is reported, not enforced)
// A full run fails when it misses the speed bar (guard.ts).
//   pnpm bench --store    durable turns (@turnkit/store) on PGlite, and on Postgres with --postgres URL
//   pnpm bench --durable --postgres URL   turnkit workers against LangGraph's PostgresSaver (1, 2, 4 processes)
//   pnpm bench --check    the model checker alone: exploreTurn states/s and transitions/s (--write: its section)
//   pnpm bench --durable --long --postgres URL   the store, DBOS and LangGraph on long turns (10, 100, 1,000 rounds)
//   pnpm bench --durable --thread --postgres URL   one thread of 500 turns, turnkit against PostgresSaver on one thread_id
import { spawnSync } from 'node:child_process';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { errorMessage } from '@turnkit/core/internal';
import { runBench, runTurnBench, writeBenchmarksDoc, writeTurnSections, type BenchSettings } from './bench.js';
import { formatCheckTerminal, renderCheckSection, runCheckBench, writeCheckSection } from './check-bench.js';
import { checkSpeedBar } from './guard.js';
import { formatTerminal, formatTurnTerminal } from './report.js';
import { runStoreBench } from './store-bench.js';
import { measureNewStore } from './new-store.js';
import { availableParallelism } from 'node:os';
import { runDurableBench } from './durable.js';
import {
  formatLongTerminal,
  LONG_SYSTEM_NAMES,
  type LongSystem,
  renderLongSection,
  runLongBench,
  writeLongSection,
} from './durable-long.js';
import { formatDurableTerminal, renderDurableSection, writeDurableSection } from './durable-report.js';
import { ensurePeers } from './peer-install.js';
import { formatStoreTerminal, renderStoreSection, writeStoreSection } from './store-report.js';
import { runThreadBench } from './thread-bench.js';
import { formatThreadTerminal, renderThreadSection, writeThreadSection } from './thread-report.js';

const USAGE = `Usage: pnpm bench [--quick] [--write] [--rounds N] [--turns N] [--warmup N]
       pnpm bench --per-turn [--write] [--rounds N] [--turns N] [--warmup N]
       pnpm bench --store [--postgres URL] [--turns N] [--quick] [--write]
       pnpm bench --durable --postgres URL [--turns N] [--quick] [--write]
       pnpm bench --check [--write]
       pnpm bench --durable --long --postgres URL [--systems LIST] [--write]
       pnpm bench --durable --thread --postgres URL [--turns N] [--write]
  --quick       turnkit systems and the floor, a few hundred turns (what CI runs; asserts no
                timing; without it the run fails when turnkit misses its speed bar against the peers)
  --write       rewrite docs/benchmarks.md with this run (with --store: its durable-turns section only;
                with --per-turn: the per-turn table, the first two targets, the time per turn under
                "What bounds it" and the profile)
  --per-turn    only the time, CPU and allocation per turn of turnkit, the floor and the peers, with
                step's cost per transition and turnkit's profile (fails when turnkit misses its
                speed bar, as a full run does)
  --store       durable turns through @turnkit/store and one worker: statements, bytes, turns/s
  --postgres U  with --store: measure on this Postgres too (in a scratch schema, dropped after)
  --durable     turnkit worker processes against LangChain createAgent + LangGraph PostgresSaver on the
                Postgres of --postgres (1, 2, 4 processes): turns/s, statements and bytes per turn,
                decision-to-running latency
  --check       the model checker alone: exploreTurn over growing bounds, states/s, transitions/s,
                heap per stored node, beside one step's cost (with --write: its section only)
  --long        with --durable: the store, turnkit on DBOS and LangGraph, one process each, on the
                bench scenario and on turns of 10, 100 and 1,000 rounds of 2 KB tool outputs: per
                turn and per round turns/s, statements, commits, WAL and stored bytes
  --systems L   with --long: only these of turnkit,dbos,langgraph (comma-separated; not with --write)
  --thread      with --durable: only the thread case, one conversation of --turns turns (default 500)
                against PostgresSaver on one thread_id: WAL, stored bytes and time per turn at turns
                1–10 and the last ten, and the time to load the thread's context
  --rounds N    interleaved rounds (default 40, quick 10)
  --turns N     turns per system per round (default 25, quick 20)
  --warmup N    warm-up turns per system (default 200, quick 50)`;

function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number of at least 1, got '${value}'.`);
  return n;
}

function command(): string {
  const args = process.argv.slice(2).join(' ');
  const base =
    process.env['npm_lifecycle_event'] === 'bench'
      ? 'pnpm bench'
      : `node ${relative(process.cwd(), fileURLToPath(import.meta.url))}`;
  return args ? `${base} ${args}` : base;
}

const log = (line: string): void => console.error(line);

/** The command line as the page records it; a Postgres URL is not recorded (it may hold a password). */
const shownCommand = (): string => command().replace(/--postgres \S+/, '--postgres URL');

/** With --write: writes a section of docs/benchmarks.md (`write` returns its path) and says so. */
function writeIfAsked(values: { write: boolean }, what: string, write: () => string): void {
  if (values.write) console.error(`Wrote ${what} of ${relative(process.cwd(), write())}.`);
}

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        quick: { type: 'boolean', default: false },
        write: { type: 'boolean', default: false },
        rounds: { type: 'string' },
        turns: { type: 'string' },
        warmup: { type: 'string' },
        store: { type: 'boolean', default: false },
        durable: { type: 'boolean', default: false },
        check: { type: 'boolean', default: false },
        long: { type: 'boolean', default: false },
        thread: { type: 'boolean', default: false },
        'per-turn': { type: 'boolean', default: false },
        systems: { type: 'string' },
        postgres: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (values.postgres !== undefined && !values.store && !values.durable) {
    console.error(`--postgres is for --store and --durable.\n${USAGE}`);
    return 2;
  }
  if ((values.long || values.thread) && !values.durable) {
    console.error(`--long and --thread are for --durable.\n${USAGE}`);
    return 2;
  }
  if (values.durable && values.long) return longMain(values);
  if (values.durable && values.thread) return threadMain(values);
  if (values.durable) return durableMain(values);
  if (values.store) return storeMain(values);
  // The heap figure needs a full GC before each reading: re-run this process with --expose-gc.
  if (typeof globalThis.gc !== 'function') {
    const child = spawnSync(
      process.execPath,
      ['--expose-gc', ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)],
      {
        stdio: 'inherit',
      },
    );
    return child.status ?? 1;
  }
  if (values.check) {
    const gc = globalThis.gc;
    const figures = await runCheckBench({ gc: () => gc(), log });
    console.log(formatCheckTerminal(figures));
    writeIfAsked(values, 'the model-checking section', () => writeCheckSection(renderCheckSection(figures, command())));
    return 0;
  }
  const quick = values.quick;
  if (values['per-turn'] && quick) {
    console.error(`--per-turn compares against the peers; --quick runs none.\n${USAGE}`);
    return 2;
  }
  const settings: BenchSettings = {
    quick,
    rounds: positiveInt('rounds', values.rounds, quick ? 10 : 40),
    turnsPerRound: positiveInt('turns', values.turns, quick ? 20 : 25),
    warmupTurns: positiveInt('warmup', values.warmup, quick ? 50 : 200),
    command: command(),
    gc: globalThis.gc,
    log,
  };
  if (values['per-turn']) {
    const turnReport = await runTurnBench(settings);
    console.log(formatTurnTerminal(turnReport));
    const bar = checkSpeedBar(turnReport);
    console.log(`\nSpeed bar: ${bar.message}`);
    writeIfAsked(values, 'the per-turn parts', () => writeTurnSections(turnReport));
    return bar.ok ? 0 : 1;
  }
  const report = await runBench(settings);
  console.log(formatTerminal(report));
  const guard = checkSpeedBar(report);
  console.log(`\nSpeed bar: ${guard.message}`);
  if (values.write) console.error(`Wrote ${relative(process.cwd(), writeBenchmarksDoc(report))}.`);
  return guard.ok ? 0 : 1;
}

async function storeMain(values: { quick: boolean; write: boolean; turns?: string; postgres?: string }): Promise<number> {
  const figures = await runStoreBench({
    turns: positiveInt('turns', values.turns, values.quick ? 20 : 200),
    ...(values.postgres === undefined ? {} : { postgresUrl: values.postgres }),
    log,
  });
  console.error('A new PGlite store, in a fresh process: initdb, and from the copy of a fresh cluster…');
  const opening = measureNewStore(values.quick ? 1 : 5);
  console.log(formatStoreTerminal(figures, opening));
  writeIfAsked(values, 'the durable-turns section', () =>
    writeStoreSection(renderStoreSection(figures, shownCommand(), opening)),
  );
  return 0;
}

async function durableMain(values: { quick: boolean; write: boolean; turns?: string; postgres?: string }): Promise<number> {
  if (values.postgres === undefined) {
    console.error(`--durable needs --postgres URL (a Postgres both systems share).\n${USAGE}`);
    return 2;
  }
  ensurePeers(log);
  const report = await runDurableBench({
    postgresUrl: values.postgres,
    turns: positiveInt('turns', values.turns, values.quick ? 20 : 200),
    decidedTurns: values.quick ? 5 : 50,
    log,
  });
  console.log(formatDurableTerminal(report));
  writeIfAsked(values, 'the durable section', () =>
    writeDurableSection(renderDurableSection(report, shownCommand(), availableParallelism())),
  );
  return 0;
}

async function longMain(values: { write: boolean; postgres?: string; systems?: string }): Promise<number> {
  if (values.postgres === undefined) {
    console.error(`--durable --long needs --postgres URL (a Postgres server the three systems share).\n${USAGE}`);
    return 2;
  }
  const all = Object.keys(LONG_SYSTEM_NAMES) as LongSystem[];
  const systems = values.systems === undefined ? all : values.systems.split(',').map((s) => s.trim());
  const unknown = systems.filter((s) => !all.includes(s as LongSystem));
  if (unknown.length > 0 || systems.length === 0) {
    console.error(`--systems takes some of ${all.join(',')}, got '${values.systems ?? ''}'.\n${USAGE}`);
    return 2;
  }
  if (values.write && systems.length < all.length) {
    console.error(`--write rewrites the whole long turns section: run it with every system (no --systems).\n${USAGE}`);
    return 2;
  }
  if (systems.some((s) => s !== 'turnkit')) ensurePeers(log);
  const report = await runLongBench({
    postgresUrl: values.postgres,
    systems: systems as LongSystem[],
    log,
  });
  console.log(formatLongTerminal(report));
  writeIfAsked(values, 'the long turns section', () => writeLongSection(renderLongSection(report, shownCommand())));
  return 0;
}

async function threadMain(values: { write: boolean; turns?: string; postgres?: string }): Promise<number> {
  if (values.postgres === undefined) {
    console.error(`--durable --thread needs --postgres URL (a Postgres both systems share).\n${USAGE}`);
    return 2;
  }
  ensurePeers(log);
  const figures = await runThreadBench({
    postgresUrl: values.postgres,
    turns: positiveInt('turns', values.turns, 500),
    log,
  });
  console.log(formatThreadTerminal(figures));
  writeIfAsked(values, 'the thread section', () =>
    writeThreadSection(renderThreadSection(figures, shownCommand(), `${availableParallelism()} cores`)),
  );
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(errorMessage(error));
    process.exitCode = 1;
  },
);
