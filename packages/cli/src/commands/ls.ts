// `turnkit ls`: the stored turns, oldest first.

import type { StoredStatus } from '@turnkit/store';
import { STORED_STATUSES } from '@turnkit/store/internal';
import { type Command, Option } from 'commander';
import { wholeNumber } from '../errors.js';
import { safeText } from '../safe-text.js';
import type { CommandKit } from './store-common.js';
import { dbosOption, storeOption, withTurns } from './store-common.js';

interface LsFlags {
  readonly store: string;
  readonly dbos?: string;
  readonly status?: StoredStatus;
  readonly limit: number;
}

async function lsCommand(flags: LsFlags): Promise<number> {
  return withTurns(flags, async (store) => {
    const lines: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await store.list({
        limit: Math.min(flags.limit - lines.length, 200),
        cursor,
        ...(flags.status ? { status: flags.status } : {}),
      });
      for (const t of page.turns) lines.push(`${t.id}  ${t.agent}  ${t.status}  ${t.updatedAt}`);
      cursor = page.cursor;
    } while (cursor !== null && lines.length < flags.limit);
    if (lines.length === 0)
      process.stderr.write(
        `No turns in ${flags.dbos === undefined ? `the store ${safeText(flags.store)}` : `DBOS's database ${safeText(flags.dbos)}`}${flags.status ? ` with status ${flags.status}` : ''}.\n`,
      );
    else process.stdout.write(`${lines.map((l) => safeText(l)).join('\n')}\n`);
    return 0;
  });
}

export function registerLs(program: Command, { configure, setExit }: CommandKit): void {
  configure(program.command('ls'))
    .description('List the stored turns: id, agent, status, last update.')
    .addOption(storeOption())
    .addOption(dbosOption())
    .addOption(new Option('--status <status>', 'only turns with this status').choices(STORED_STATUSES))
    .option('--limit <n>', 'at most this many turns', wholeNumber(1, 1000, 'Expected a whole number from 1 to 1000.'), 50)
    .addHelpText(
      'after',
      '\nExamples:\n  $ turnkit ls\n  $ turnkit ls --status awaiting_approval --store postgres://localhost/app',
    )
    .action(async (flags: LsFlags) => setExit(await lsCommand(flags)));
}
