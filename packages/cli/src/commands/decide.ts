// `turnkit approve <turn> <call>` and `turnkit reject <turn> <call>`: a durable decision for a
// parked call of a stored turn. A worker applies it (`turnkit worker`).

import type { ApprovalDecision } from '@turnkit/core';
import { CallAlreadyDecidedError } from '@turnkit/store';
import { type Command, Option } from 'commander';
import { oneLine, UsageError } from '../errors.js';
import { ServerRefusal } from '../http-store.js';
import { safeText } from '../safe-text.js';
import { EXIT } from '../turn.js';
import { type CommandKit, continuesWith, dbosOption, getTurn, storeOption, type TurnsAt, withTurns } from './store-common.js';

interface DecideFlags {
  readonly store: string;
  readonly dbos?: string;
  readonly remember?: 'session' | 'tool';
  readonly reason?: string;
}

/** The store's message on one line, without the `store.decide:` it starts with (the command names itself). */
const storeMessage = (error: unknown): string => oneLine(error).replace(/^store\.decide: /, '');

async function decideCommand(turnId: string, callId: string, decision: ApprovalDecision, at: TurnsAt): Promise<number> {
  return withTurns(at, async (opened, dev) => {
    const turn = await getTurn(opened, turnId, at.dbos ?? at.store);
    try {
      await opened.decide(turnId, { [callId]: decision });
    } catch (error) {
      // The first decision stands: not a usage error, so the exit is `failed`, as for any decision not taken.
      if (error instanceof CallAlreadyDecidedError || (error instanceof ServerRefusal && error.code === 'already_decided')) {
        process.stderr.write(`turnkit: ${safeText(storeMessage(error))}\n`);
        return EXIT.failed;
      }
      // Not parked, no such call: the store's message names the turn, the call and the waiting ones.
      throw new UsageError(storeMessage(error));
    }
    const verb = decision.type === 'approve' ? 'Approved' : 'Rejected';
    const waiting = turn.parked.filter((p) => p.call.id !== callId).map((p) => p.call.id);
    process.stdout.write(
      `${safeText(`${verb} ${callId} of turn ${turnId} (stored).`)}\n` +
        (waiting.length > 0
          ? `${safeText(`Still waiting for a decision: ${waiting.join(', ')}.`)}\n`
          : `${safeText(dev === null ? capitalized(continuesWith(at)) : `${continuesWith(at, dev)}.`)}\n`),
    );
    return EXIT.ok;
  });
}

const capitalized = (text: string): string => `${text.slice(0, 1).toUpperCase()}${text.slice(1)}`;

export function registerDecide(program: Command, { configure, setExit }: CommandKit): void {
  /** A decision command: the turn, the call and where the turns are; `decision` reads the command's own flag. */
  const decideOn = (name: string, description: string, decision: (flags: DecideFlags) => ApprovalDecision): Command =>
    configure(program.command(name))
      .description(description)
      .argument('<turn>', 'the turn id')
      .argument('<call>', 'the parked call id (see `turnkit show <turn>`)')
      .addOption(storeOption())
      .addOption(dbosOption())
      .action(async (turn: string, call: string, flags: DecideFlags) =>
        setExit(await decideCommand(turn, call, decision(flags), flags)),
      );

  decideOn('approve', 'Approve a parked call of a stored turn (durable when this returns).', (flags) =>
    flags.remember === undefined ? { type: 'approve' } : { type: 'approve', remember: flags.remember },
  )
    .addOption(
      new Option('--remember <scope>', 'also allow later calls: this turn (session) or any turn of the tool (tool)').choices([
        'session',
        'tool',
      ]),
    )
    .addHelpText(
      'after',
      '\nExamples:\n  $ turnkit approve tidy-tmp call_2\n  $ turnkit approve tidy-tmp call_2 --remember session',
    );

  decideOn('reject', 'Reject a parked call of a stored turn; the model is told it was rejected (and why).', (flags) =>
    flags.reason === undefined || flags.reason.trim() === '' ? { type: 'reject' } : { type: 'reject', reason: flags.reason },
  )
    .option('--reason <text>', 'why, for the model')
    .addHelpText(
      'after',
      "\nExamples:\n  $ turnkit reject tidy-tmp call_3\n  $ turnkit reject tidy-tmp call_3 --reason 'keep the cache'",
    );
}
