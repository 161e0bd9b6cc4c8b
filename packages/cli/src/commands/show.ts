// `turnkit show <turn>`: one stored turn, its transcript, decisions and outcome (or its JSON);
// `turnkit show --thread <id>`: a thread, its turns in order and its transcript.

import type { Command } from 'commander';
import { messageLine } from '@turnkit/testing/internal';
import { UsageError } from '../errors.js';
import { safeJson, safeText } from '../safe-text.js';
import { type CommandKit, dbosOption, exitFor, getTurn, storeOption, turnLines, withTurns } from './store-common.js';

interface ShowFlags {
  readonly store: string;
  readonly dbos?: string;
  readonly json?: boolean;
  readonly thread?: string;
}

async function showCommand(id: string | undefined, flags: ShowFlags): Promise<number> {
  if ((id === undefined) === (flags.thread === undefined))
    throw new UsageError('Give a turn id or --thread <id> (one of them): `turnkit ls` lists the turns.');
  if (flags.thread !== undefined) return showThread(flags.thread, flags);
  return withTurns(flags, async (store, dev) => {
    const turn = await getTurn(store, id as string, flags.dbos ?? flags.store);
    process.stdout.write(
      flags.json === true ? `${safeJson(JSON.stringify(turn))}\n` : `${turnLines(turn, flags, undefined, dev).join('\n')}\n`,
    );
    return exitFor(turn);
  });
}

/** A thread: its turns in order, its transcript, and the current turn's parked calls with the commands that decide them. */
async function showThread(thread: string, flags: ShowFlags): Promise<number> {
  return withTurns(flags, async (store, dev) => {
    const found = await store.get({ thread });
    if (found === null)
      throw new UsageError(
        flags.dbos === undefined
          ? `There is no thread '${thread}' in the store ${flags.store}; \`turnkit run --store --thread\` starts one.`
          : `There is no thread '${thread}' in DBOS's database ${flags.dbos}; \`submit({ thread })\` starts one.`,
      );
    if (flags.json === true) {
      process.stdout.write(`${safeJson(JSON.stringify(found))}\n`);
      return 0;
    }
    const lines = [
      `thread ${found.id} · agent ${found.agent} · ${found.status}${found.closeReason === null ? '' : ` (${found.closeReason})`}`,
      ...found.turns.map((t) => `  turn ${t.id} · ${t.status}`),
      ...found.transcript.map(messageLine),
    ];
    const current = found.current === null ? null : await store.get(found.current);
    // The current turn's parked calls, with the commands that decide them (as `turnkit show <turn>` prints them).
    if (current !== null && current.parked.length > 0) {
      const shown = turnLines(current, flags, undefined, dev);
      lines.push('', `turn ${current.id} is`, ...shown.slice(shown.indexOf('') + 1));
    }
    process.stdout.write(`${lines.map((line) => safeText(line)).join('\n')}\n`);
    return current === null ? 0 : exitFor(current);
  });
}

export function registerShow(program: Command, { configure, setExit }: CommandKit): void {
  configure(program.command('show'))
    .description('Show a stored turn (transcript, decisions, outcome, and what it waits for), or a thread of turns.')
    .argument('[turn]', 'the turn id (see `turnkit ls`)')
    .option('--thread <id>', 'show this thread instead: its turns in order, its transcript, and what its current turn waits for')
    .addOption(storeOption())
    .addOption(dbosOption())
    .option('--json', 'print the stored turn as JSON (state, transcript, parked calls, decisions, tool journal)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ turnkit show tidy-tmp\n  $ turnkit show tidy-tmp --json\n  $ turnkit show --thread tidy-up',
    )
    .action(async (id: string | undefined, flags: ShowFlags) => setExit(await showCommand(id, flags)));
}
