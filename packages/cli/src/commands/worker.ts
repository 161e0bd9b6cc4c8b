// `turnkit worker --agents <file>`: runs the stored turns of those agents (claims runnable turns
// with a lease, runs them, writes every checkpoint) until Ctrl+C or SIGTERM, or with --until-idle
// until no turn is left to run. On a signal it drains: it stops claiming, lets the turns it holds
// finish or park, and hands back what still runs when --drain-ms passes. It says what it does on
// standard error, one line per event (turns claimed, finished, parked; the database lost and back).

import { createWorker, describeWorkerEvent } from '@turnkit/store';
import { OPEN_RETRY_MS } from '@turnkit/store/internal';
import type { Command } from 'commander';
import { oneLine, UsageError, wholeNumber } from '../errors.js';
import { safeText } from '../safe-text.js';
import { EXIT } from '../turn.js';
import { loadAgents } from './agents-file.js';
import { type CommandKit, sayIfNew, storeOption, withStore } from './store-common.js';

interface WorkerFlags {
  readonly store: string;
  readonly agents: string;
  readonly concurrency: number;
  readonly drainMs: number;
  readonly quiet?: boolean;
  readonly untilIdle?: boolean;
}

/** A worker's lines on standard error, each naming `command`: every event unless `quiet`, and every fault. */
export function workerReports(command: string, quiet: boolean): Pick<Parameters<typeof createWorker>[0], 'observer' | 'onError'> {
  const say = (line: string) => process.stderr.write(`${safeText(`turnkit ${command}: ${line}`)}\n`);
  return {
    ...(quiet ? {} : { observer: (event, stats) => say(describeWorkerEvent(event, stats)) }),
    onError: (error, turnId) => say(`${turnId === null ? '' : `turn ${turnId}: `}${oneLine(error)}`),
  };
}

/** Resolves on the first SIGINT or SIGTERM (`turnkit worker` and `turnkit dev` stop on it). */
export function stopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.removeListener('SIGINT', stop);
      process.removeListener('SIGTERM', stop);
      resolve(signal);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

async function workerCommand(flags: WorkerFlags): Promise<number> {
  const agents = await loadAgents(flags.agents);
  sayIfNew(flags.store);
  // A worker (re)started while Postgres restarts waits for it (OPEN_RETRY_MS) rather than exiting.
  return withStore(
    flags.store,
    async (store) => {
      let worker;
      try {
        worker = createWorker({
          store,
          agents,
          concurrency: flags.concurrency,
          // A long-running worker reports each event; a script's --until-idle run stays quiet.
          ...workerReports('worker', flags.quiet === true || flags.untilIdle === true),
        });
      } catch (error) {
        throw new UsageError(`${flags.agents}: ${oneLine(error)}`);
      }
      const names = Object.keys(agents).join(', ') || '(none)';
      if (flags.untilIdle === true) {
        await worker.runUntilIdle();
        process.stderr.write(`${safeText(`turnkit worker: agents ${names}: no runnable turn is left in ${flags.store}.`)}\n`);
        return EXIT.ok;
      }
      process.stderr.write(`${safeText(`turnkit worker: running agents ${names} on ${flags.store}; Ctrl+C stops it.`)}\n`);
      worker.start();
      const signal = await stopSignal();
      process.stderr.write(
        `turnkit worker: ${signal}: finishing the turns it holds; what still runs in ${flags.drainMs} ms is handed back…\n`,
      );
      await worker.stop({ deadlineMs: flags.drainMs });
      return EXIT.ok;
    },
    OPEN_RETRY_MS,
  );
}

export function registerWorker(program: Command, { configure, setExit }: CommandKit): void {
  configure(program.command('worker'))
    .description('Run stored turns with the agents of a file until stopped (or until idle).')
    .requiredOption('--agents <file>', 'a module exporting `agents` ({ [name]: { model, tools, … } }), or a scenario file')
    .addOption(storeOption())
    .option('--concurrency <n>', 'turns run at once', wholeNumber(1, 1000, 'Expected a whole number from 1 to 1000.'), 4)
    .option(
      '--drain-ms <ms>',
      'on SIGTERM or Ctrl+C, how long the turns held may take before they are handed back',
      wholeNumber(0, 2_147_483_647, 'Expected a whole number of milliseconds.'),
      10_000,
    )
    .option('--quiet', 'no line per event on standard error (faults are still reported)')
    .option('--until-idle', 'exit when no runnable turn is left (for scripts)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ turnkit worker --agents agents.ts --store postgres://localhost/app\n  $ turnkit worker --agents packages/cli/examples/delete-files.ts --until-idle',
    )
    .action(async (flags: WorkerFlags) => setExit(await workerCommand(flags)));
}
