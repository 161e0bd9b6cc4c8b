// The test projects, imported by vitest.config.ts as `test.projects`:
//
// - `unit`: in-process tests, every package (`pnpm test:unit`, a few minutes on 2 cores). They
//   start no process, open no Postgres and no browser and pack nothing; PGlite (in-process) and
//   in-memory stores are fine. packages/core/test/repo.test.ts keeps it so.
// - `slow`: the files below, each with what makes it slow: child processes (the CLI binary, tsx
//   programs, crash, chaos and partition drills), the real Postgres of TURNKIT_TEST_POSTGRES_URL,
//   a browser, packing and installing the packages. `pnpm test` (CI) runs both.
//
// One package's tests alone: `pnpm vitest run packages/<name>`.
import { configDefaults } from 'vitest/config';

/** Test files of the `slow` project, relative to the repository, and why each is slow. */
export const slowTests: Readonly<Record<string, string>> = {
  'packages/bench/test/store-bench.test.ts': 'Postgres',
  'packages/check/test/agent-counterexample.test.ts': 'vitest as a child process',
  'packages/cli/test/agent-file.test.ts': 'the CLI binary, as child processes',
  'packages/cli/test/commands.test.ts': 'the CLI binary, as child processes',
  'packages/cli/test/dev.test.ts': 'the CLI binary, as child processes (turnkit dev and the commands that go through it)',
  'packages/cli/test/registry.test.ts':
    'packs and publishes the packages to a local registry (verdaccio), installs them by name with npm',
  'packages/cli/test/docs.test.ts': 'the CLI binary, as child processes',
  'packages/cli/test/mcp.test.ts': 'the CLI binary, as child processes',
  'packages/cli/test/resume-safety.test.ts': 'the CLI binary, as child processes',
  'packages/cli/test/run.test.ts': 'the CLI binary, as child processes',
  'packages/cli/test/safe-text.prop.test.ts': 'bash, as child processes',
  'packages/cli/test/serve.test.ts': 'the CLI binary, as child processes',
  'packages/cli/test/signals.test.ts': 'the CLI binary, signalled',
  'packages/cli/test/store-commands.test.ts': 'the CLI binary, as child processes; Postgres',
  'packages/cli/test/worker-drain.test.ts': 'the CLI binary, as child processes',
  'packages/dbos/test/dbos.test.ts': 'Postgres (DBOS)',
  'packages/dbos/test/docs.test.ts': 'Postgres (DBOS)',
  'packages/dbos/test/interpreter-conformance.test.ts': 'Postgres (DBOS)',
  'packages/dbos/test/processes.test.ts': 'processes running DBOS, one killed (SIGKILL); Postgres',
  'packages/inline/test/resume-process.test.ts': 'a child process',
  'packages/inline/test/suspend-resume-doc.test.ts': 'tsx child processes',
  'packages/mcp/test/stdio.test.ts': 'MCP servers as child processes',
  'packages/otel/test/resume-process.test.ts': 'tsx child processes',
  'packages/otel/test/store.test.ts': 'tsx child processes',
  'packages/server/test/browser.test.ts': 'a browser (chromium)',
  'packages/server/test/browser-dbos.test.ts': 'a browser (chromium); Postgres (DBOS)',
  'packages/server/test/console-script.test.ts': 'tsx child processes',
  'packages/server/test/decide.test.ts': 'Postgres',
  'packages/server/test/postgres.test.ts': 'Postgres',
  'packages/store/test/chaos.test.ts': 'worker processes killed at random, a Postgres of its own started and restarted',
  'packages/store/test/checkpoint.test.ts': 'Postgres',
  'packages/store/test/conformance.test.ts': 'Postgres',
  'packages/store/test/conversations-doc.test.ts': 'tsx child processes',
  'packages/store/test/crash.test.ts': 'processes killed mid-turn (SIGKILL); Postgres',
  'packages/store/test/decide.test.ts': 'Postgres',
  'packages/store/test/open.test.ts': 'processes racing for a PGlite lock',
  'packages/store/test/partition.test.ts': 'a network partition between worker processes and Postgres',
  'packages/store/test/submit.test.ts': 'Postgres',
  'packages/store/test/thread-conformance.test.ts': 'Postgres',
  'packages/store/test/threads.test.ts': 'Postgres',
  'packages/store/test/workers.test.ts': 'Postgres',
  'packages/testing/test/entry-points.test.ts': 'tsx child processes',
};

/**
 * The longest test files, with their seconds in a CI run (wall time, both projects running at once
 * on 2 cores; the run of commit 4116941, 399 s). vitest.config.ts starts them first, longest first,
 * so that no long file starts near the end and keeps one worker busy alone (vitest's own order,
 * without the timings of an earlier run as on a fresh clone, is by file size). Files not listed
 * follow, largest first.
 */
export const longestTests: Readonly<Record<string, number>> = {
  'packages/cli/test/registry.test.ts': 71,
  'packages/store/test/interpreter-conformance.test.ts': 44,
  'packages/store/test/crash.test.ts': 43,
  'packages/store/test/chaos.test.ts': 42,
  'packages/cli/test/check-command.test.ts': 30,
  'packages/cli/test/store-commands.test.ts': 30,
  'packages/cli/test/run.test.ts': 24,
  'packages/check/test/store-check.test.ts': 18,
  'packages/server/test/browser.test.ts': 18,
  'packages/cli/test/dev.test.ts': 17,
  'packages/check/test/explore.test.ts': 16,
  'packages/cli/test/commands.test.ts': 16,
  'packages/store/test/open.test.ts': 15,
  'packages/server/test/browser-dbos.test.ts': 14,
  'packages/cli/test/mcp.test.ts': 13,
  'packages/dispatch/test/hostile.prop.test.ts': 12,
  'packages/cli/test/resume-safety.test.ts': 11,
  'packages/store/test/pglite-template.test.ts': 11,
  'packages/cli/test/agent-file.test.ts': 10,
  'packages/cli/test/docs.test.ts': 10,
};

/**
 * Test files run at once, of both projects together. vitest runs the projects of one
 * `sequence.groupOrder` in one pool of this many workers (it refuses two sizes in one group), so
 * this is the limit for the whole run, not per project. Two, one per core of CI's machine: a whole
 * `pnpm test` took 1,590 s of CPU (measured on a loaded machine), near the 1,690 core-seconds of an
 * 846 s CI run on 2 cores, so a third file finds little idle CPU; with three, a file that starts
 * many processes under the 60 s limit timed out on a loaded machine
 * (packages/cli/test/safe-text.prop.test.ts).
 */
const WORKERS = 2;

const slow = Object.keys(slowTests);

export const projects = [
  {
    extends: true as const,
    test: {
      name: 'unit',
      include: ['packages/*/test/**/*.test.ts'],
      // Worker threads (WORKERS in all, with the slow project's), each running its files one after
      // another in one module graph (the sources, zod, fast-check and PGlite's WebAssembly are
      // loaded once per worker, not per file).
      pool: 'threads' as const,
      isolate: false,
      maxWorkers: WORKERS,
      // The model checks and property tests are CPU-bound and share the cores with the slow
      // project's processes: a limit here only catches a hang.
      testTimeout: 120_000,
      hookTimeout: 120_000,
      exclude: [...configDefaults.exclude, ...Object.keys(slowTests)],
      sequence: { groupOrder: 0 },
    },
  },
  {
    extends: true as const,
    test: {
      name: 'slow',
      include: slow,
      // A process per file (these files start processes, signal them and restart Postgres), in the
      // same pool of WORKERS as the unit project's threads.
      pool: 'forks' as const,
      // V8 compiles PGlite's WebAssembly with its baseline compiler only in these processes, as in
      // the CLI and fixture processes they start (packages/cli/test/run-cli.ts): a slow file opens
      // PGlite a few times and runs few queries on it, and recompiling the hot functions cost more
      // CPU than it saved (threads.test.ts 16.4 s of CPU → 13.6 s, checkpoint.test.ts 26.6 → 21.6,
      // conformance and workers together 32.2 → 25.8). The unit project keeps TurboFan: its long
      // in-process PGlite runs gain from it (interpreter-conformance.test.ts 49.9 s → 53.2 without).
      execArgv: ['--liftoff-only'],
      maxWorkers: WORKERS,
      sequence: { groupOrder: 0 },
    },
  },
];

export default projects;
