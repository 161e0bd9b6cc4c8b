// `turnkit watch <turn>`: a stored turn as it happens: its history, then each message, notice and
// status as it is written, until the turn ends (Ctrl+C stops watching; the turn goes on). The
// exit code is the turn's (as `turnkit show`).

import { messageLine } from '@turnkit/testing';
import type { Command } from 'commander';
import { safeText } from '../safe-text.js';
import { type CommandKit, exitFor, getTurn, storeOption, withClient } from './store-common.js';

interface WatchFlags {
  readonly store: string;
}

async function watchCommand(id: string, flags: WatchFlags): Promise<number> {
  return withClient(flags.store, async (client) => {
    await getTurn(client, id, flags.store);
    const abort = new AbortController();
    const stop = (): void => abort.abort();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    try {
      for await (const event of client.watch(id, { signal: abort.signal })) {
        const line =
          event.type === 'message'
            ? messageLine(event.message)
            : event.type === 'notice'
              ? `notice: ${event.notice.name}`
              : `status: ${event.status}`;
        process.stdout.write(`${safeText(line)}\n`);
      }
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    } finally {
      process.removeListener('SIGINT', stop);
      process.removeListener('SIGTERM', stop);
    }
    const turn = await getTurn(client, id, flags.store);
    process.stdout.write(`${safeText(`→ turn ${id} is ${turn.status}`)}\n`);
    return exitFor(turn);
  });
}

export function registerWatch(program: Command, { configure, setExit }: CommandKit): void {
  configure(program.command('watch'))
    .description('Follow a stored turn as it runs, until it ends (Ctrl+C stops watching).')
    .argument('<turn>', 'the turn id (see `turnkit ls`)')
    .addOption(storeOption())
    .addHelpText('after', '\nExamples:\n  $ turnkit watch tidy-tmp\n  $ turnkit watch tidy-tmp --store postgres://localhost/app')
    .action(async (id: string, flags: WatchFlags) => setExit(await watchCommand(id, flags)));
}
