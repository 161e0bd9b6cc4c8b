// `turnkit cancel <turn>`: a durable cancel of a stored turn. A worker applies it: the turn ends
// `cancelled`, and every call without a result gets one saying so.

import type { Command } from 'commander';
import { safeText, shellCommand } from '../safe-text.js';
import { EXIT } from '../turn.js';
import { type CommandKit, continuesWith, dbosOption, getTurn, storeArgs, storeOption, withTurns } from './store-common.js';

interface CancelFlags {
  readonly store: string;
  readonly dbos?: string;
  readonly reason?: string;
}

async function cancelCommand(turnId: string, flags: CancelFlags): Promise<number> {
  return withTurns(flags, async (store, dev) => {
    const turn = await getTurn(store, turnId, flags.dbos ?? flags.store);
    const reason = flags.reason === undefined || flags.reason.trim() === '' ? 'cancelled with turnkit cancel' : flags.reason;
    if (!(await store.cancel(turnId, reason))) {
      process.stderr.write(`${safeText(`Turn ${turnId} has already ended (${turn.status}); nothing to cancel.`)}\n`);
      return EXIT.failed;
    }
    const next =
      flags.dbos === undefined && dev === null
        ? `a worker ends the turn: ${shellCommand(['turnkit', 'worker', '--agents', 'AGENTS_FILE', '--until-idle', ...storeArgs(flags.store)])}`
        : `${continuesWith(flags, dev)}.`;
    process.stdout.write(`${safeText(`Cancel of turn ${turnId} is stored; ${next}`)}\n`);
    return EXIT.ok;
  });
}

export function registerCancel(program: Command, { configure, setExit }: CommandKit): void {
  configure(program.command('cancel'))
    .description('Cancel a stored turn (durable when this returns).')
    .argument('<turn>', 'the turn id')
    .addOption(storeOption())
    .addOption(dbosOption())
    .option('--reason <text>', 'why (kept in the outcome)')
    .addHelpText('after', "\nExamples:\n  $ turnkit cancel tidy-tmp\n  $ turnkit cancel tidy-tmp --reason 'wrong customer'")
    .action(async (turn: string, flags: CancelFlags) => setExit(await cancelCommand(turn, flags)));
}
