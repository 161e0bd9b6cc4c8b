#!/usr/bin/env node
// `pnpm bench`: turnkit against its peers on one scenario, in one process run.
//   pnpm bench            full comparison (installs the peers into packages/bench/.peers on first use)
//   pnpm bench --write    same, and rewrites docs/benchmarks.md
//   pnpm bench --quick    turnkit and the floor only, small counts (CI keeps the harness working; no timing
//                         asserted; fails when the allocation guard does, see guard.ts)
import { spawnSync } from 'node:child_process';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { errorMessage } from '@turnkit/core';
import { runBench, writeBenchmarksDoc, type BenchSettings } from './bench.js';
import { checkAllocationGuard } from './guard.js';
import { formatTerminal } from './report.js';

const USAGE = `Usage: pnpm bench [--quick] [--write] [--rounds N] [--turns N] [--warmup N]
  --quick       turnkit systems and the floor, a few hundred turns (what CI runs; asserts no
                timing, fails when allocation per turn grows past its guard)
  --write       rewrite docs/benchmarks.md with this run
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
  const quick = values.quick;
  const settings: BenchSettings = {
    quick,
    rounds: positiveInt('rounds', values.rounds, quick ? 10 : 40),
    turnsPerRound: positiveInt('turns', values.turns, quick ? 20 : 25),
    warmupTurns: positiveInt('warmup', values.warmup, quick ? 50 : 200),
    command: command(),
    gc: globalThis.gc,
    log: (line) => console.error(line),
  };
  const report = await runBench(settings);
  console.log(formatTerminal(report));
  const guard = checkAllocationGuard(report);
  console.log(`\nAllocation guard: ${guard.message}`);
  if (values.write) {
    const path = writeBenchmarksDoc(report);
    console.error(`Wrote ${relative(process.cwd(), path)}.`);
  }
  return guard.ok ? 0 : 1;
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
