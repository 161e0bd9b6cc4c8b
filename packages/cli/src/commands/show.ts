// `turnkit show <turn>`: one stored turn, its transcript, decisions and outcome (or its JSON).

import type { Command } from 'commander';
import { safeJson } from '../safe-text.js';
import { type CommandKit, exitFor, getTurn, storeOption, turnLines, withClient } from './store-common.js';

interface ShowFlags {
  readonly store: string;
  readonly json?: boolean;
}

async function showCommand(id: string, flags: ShowFlags): Promise<number> {
  return withClient(flags.store, async (store) => {
    const turn = await getTurn(store, id, flags.store);
    process.stdout.write(
      flags.json === true ? `${safeJson(JSON.stringify(turn))}\n` : `${turnLines(turn, flags.store).join('\n')}\n`,
    );
    return exitFor(turn);
  });
}

export function registerShow(program: Command, { configure, setExit }: CommandKit): void {
  configure(program.command('show'))
    .description('Show a stored turn: transcript, decisions, outcome, and what it waits for.')
    .argument('<turn>', 'the turn id (see `turnkit ls`)')
    .addOption(storeOption())
    .option('--json', 'print the stored turn as JSON (state, transcript, parked calls, decisions, tool journal)')
    .addHelpText('after', '\nExamples:\n  $ turnkit show tidy-tmp\n  $ turnkit show tidy-tmp --json')
    .action(async (id: string, flags: ShowFlags) => setExit(await showCommand(id, flags)));
}
