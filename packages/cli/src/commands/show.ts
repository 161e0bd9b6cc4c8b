// `turnkit show <turn>`: one stored turn, its transcript, decisions and outcome (or its JSON).

import type { Command } from 'commander';
import { safeJson } from '../safe-text.js';
import { type CommandKit, dbosOption, exitFor, getTurn, storeOption, turnLines, withTurns } from './store-common.js';

interface ShowFlags {
  readonly store: string;
  readonly dbos?: string;
  readonly json?: boolean;
}

async function showCommand(id: string, flags: ShowFlags): Promise<number> {
  return withTurns(flags, async (store, dev) => {
    const turn = await getTurn(store, id, flags.dbos ?? flags.store);
    process.stdout.write(
      flags.json === true ? `${safeJson(JSON.stringify(turn))}\n` : `${turnLines(turn, flags, undefined, dev).join('\n')}\n`,
    );
    return exitFor(turn);
  });
}

export function registerShow(program: Command, { configure, setExit }: CommandKit): void {
  configure(program.command('show'))
    .description('Show a stored turn: transcript, decisions, outcome, and what it waits for.')
    .argument('<turn>', 'the turn id (see `turnkit ls`)')
    .addOption(storeOption())
    .addOption(dbosOption())
    .option('--json', 'print the stored turn as JSON (state, transcript, parked calls, decisions, tool journal)')
    .addHelpText('after', '\nExamples:\n  $ turnkit show tidy-tmp\n  $ turnkit show tidy-tmp --json')
    .action(async (id: string, flags: ShowFlags) => setExit(await showCommand(id, flags)));
}
