// `turnkit watch <turn>`: a stored turn as it happens: its history, then each message, notice and
// status as it is written, until the turn ends (Ctrl+C stops watching; the turn goes on). The
// exit code is the turn's (as `turnkit show`). `turnkit watch --thread <id>`: every turn of a
// thread in order, each under a line naming it, until the thread is closed and its last turn ended.

import type { WatchEvent } from '@turnkit/store';
import { messageLine } from '@turnkit/testing/internal';
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { safeText } from '../safe-text.js';
import { type CommandKit, exitFor, getTurn, storeOption, withClient } from './store-common.js';

interface WatchFlags {
  readonly store: string;
  readonly thread?: string;
}

const eventLine = (event: WatchEvent): string =>
  event.type === 'message'
    ? messageLine(event.message)
    : event.type === 'notice'
      ? `notice: ${event.notice.name}`
      : `status: ${event.status}`;

/** Runs `follow` until it ends or Ctrl+C (or SIGTERM) stops it; a stop is not an error. */
async function untilStopped(follow: (signal: AbortSignal) => Promise<void>): Promise<void> {
  const abort = new AbortController();
  const stop = (): void => abort.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await follow(abort.signal);
  } catch (error) {
    if (!abort.signal.aborted) throw error;
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
  }
}

async function watchCommand(id: string | undefined, flags: WatchFlags): Promise<number> {
  if ((id === undefined) === (flags.thread === undefined))
    throw new UsageError('Give a turn id or --thread <id> (one of them): `turnkit ls` lists the turns.');
  if (flags.thread !== undefined) return watchThread(flags.thread, flags);
  return withClient(flags.store, async (client) => {
    await getTurn(client, id as string, flags.store);
    await untilStopped(async (signal) => {
      for await (const event of client.watch(id as string, { signal })) process.stdout.write(`${safeText(eventLine(event))}\n`);
    });
    const turn = await getTurn(client, id as string, flags.store);
    process.stdout.write(`${safeText(`→ turn ${id} is ${turn.status}`)}\n`);
    return exitFor(turn);
  });
}

/** A thread's turns as they happen; the exit code is 0 (its turns' own are theirs: `turnkit show <turn>`). */
async function watchThread(thread: string, flags: WatchFlags): Promise<number> {
  return withClient(flags.store, async (client) => {
    if ((await client.get({ thread })) === null)
      throw new UsageError(
        `There is no thread '${thread}' in the store ${flags.store}; \`turnkit run --store --thread\` starts one.`,
      );
    let turn: string | null = null;
    await untilStopped(async (signal) => {
      for await (const event of client.watch({ thread }, { signal })) {
        if (event.turnId !== turn) process.stdout.write(`${safeText(`── turn ${event.turnId}`)}\n`);
        turn = event.turnId;
        process.stdout.write(`${safeText(`  ${eventLine(event)}`)}\n`);
      }
    });
    const found = await client.get({ thread });
    process.stdout.write(`${safeText(`→ thread ${thread} is ${found?.status ?? 'gone'}`)}\n`);
    return 0;
  });
}

export function registerWatch(program: Command, { configure, setExit }: CommandKit): void {
  configure(program.command('watch'))
    .description('Follow a stored turn as it runs, until it ends, or a whole thread (Ctrl+C stops watching).')
    .argument('[turn]', 'the turn id (see `turnkit ls`)')
    .option('--thread <id>', 'follow this thread instead: each of its turns in order, until it is closed and its last turn ended')
    .addOption(storeOption())
    .addHelpText(
      'after',
      '\nExamples:\n  $ turnkit watch tidy-tmp\n  $ turnkit watch tidy-tmp --store postgres://localhost/app\n  $ turnkit watch --thread tidy-up',
    )
    .action(async (id: string | undefined, flags: WatchFlags) => setExit(await watchCommand(id, flags)));
}
