// The lock a resume takes on a suspended-turn file while it claims it: created in one step (written
// under this process's own name, then hard-linked into place), so a lock that exists always names
// its holder.

import { readFile } from 'node:fs/promises';
import { createFileOnce, isAlive } from '@turnkit/store/internal';
import { oneLine, UsageError } from './errors.js';

/** Written into a file when a resume claims it: its approvals are used, it cannot be resumed again. */
export interface ConsumedMark {
  /** When the resume claimed the file (ISO 8601). */
  readonly at: string;
  /** The process that claimed it. */
  readonly pid: number;
  /** How the resumed turn ended, once it has (`suspended` when it waits for approval again). */
  readonly outcome?: string;
  /** Where the turn was saved when it suspended again into another file. */
  readonly savedTo?: string;
}

/**
 * Creates `lock` holding `mark`, in one step: the mark is written and fsynced to a file of this
 * process first, then hard-linked to the lock's name, which fails when the lock exists. So a lock
 * that exists always names its holder, and a second resume never reads a half-written one.
 */
export async function createLock(file: string, lock: string, mark: ConsumedMark): Promise<void> {
  let created: boolean;
  try {
    created = createFileOnce(lock, JSON.stringify(mark));
  } catch (error) {
    throw new UsageError(`Could not lock ${file} for the resume (${oneLine(error)}); check that its folder is writable.`);
  }
  if (!created) throw await lockedError(file, lock);
}

async function lockedError(file: string, lock: string): Promise<UsageError> {
  let holder: Partial<ConsumedMark> = {};
  try {
    holder = JSON.parse(await readFile(lock, 'utf8')) as Partial<ConsumedMark>;
  } catch {
    // Not JSON (edited by hand, or a disk error): say what we can.
  }
  const pid = typeof holder.pid === 'number' ? holder.pid : undefined;
  const who =
    pid === undefined
      ? 'another turnkit process'
      : `process ${pid}${typeof holder.at === 'string' ? ` (since ${holder.at})` : ''}`;
  const gone =
    pid !== undefined && !isAlive(pid)
      ? ` That process is gone: if ${file} is not marked as resumed, delete ${lock} and resume again.`
      : '';
  return new UsageError(
    `${file} is being resumed by ${who}, which claims its approvals; this resume did not run anything.${gone}`,
  );
}
