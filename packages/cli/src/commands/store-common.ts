// What the commands on stored turns share: opening the store `--store` names, the option itself,
// and how a stored turn is shown (the same lines for `turnkit run --store` and `turnkit show`).

import { openStore, type Store, type StoredTurn } from '@turnkit/store';
import { type Command, Option } from 'commander';
import { oneLine, UsageError } from '../errors.js';
import { safeText, shellCommand } from '../safe-text.js';
import { EXIT } from '../turn.js';
import { messageLine } from '@turnkit/testing';

/** Where stored turns live when `--store` names nothing: PGlite in ./.turnkit (as openStore()). */
export const DEFAULT_STORE = '.turnkit';

export const STORE_HELP = `where the turns are stored: a directory for PGlite (default ${DEFAULT_STORE}), memory://, or postgres://…`;

/** `--store <url>` for the commands that read or change stored turns. */
export function storeOption(): Option {
  return new Option('--store <url>', STORE_HELP).default(DEFAULT_STORE);
}

/**
 * Opens the store; a store that cannot be opened (missing driver, PGlite in use, bad URL) is one
 * line, exit 2. A command a person waits for tries a Postgres once (`retryMs` 0); `turnkit worker`
 * waits for one that is restarting (openStore's default).
 */
export async function openCliStore(url: string, retryMs = 0): Promise<Store> {
  try {
    return await openStore(url, { retryMs });
  } catch (error) {
    throw new UsageError(`Could not open the store ${url}: ${oneLine(error)}`);
  }
}

/** Opens the store (see openCliStore for `retryMs`), runs `work`, closes the store. */
export async function withStore<T>(url: string, work: (store: Store) => Promise<T>, retryMs = 0): Promise<T> {
  const store = await openCliStore(url, retryMs);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** Reads a turn; an unknown id is a usage error that says how to list them. */
export async function getTurn(store: Store, id: string, url: string): Promise<StoredTurn> {
  const turn = await store.get(id);
  if (turn === null) throw new UsageError(`There is no turn '${id}' in the store ${url}; \`turnkit ls\` lists its turns.`);
  return turn;
}

/** ` --store URL` when the store is not the default, for the commands printed as hints. */
export function storeArgs(url: string): string[] {
  return url === DEFAULT_STORE ? [] : ['--store', url];
}

/** The exit code of a stored turn: 0 stopped, 1 failed or cancelled, 3 waiting for approval, 0 otherwise (still running). */
export function exitFor(turn: StoredTurn): number {
  if (turn.status === 'failed' || turn.status === 'cancelled') return EXIT.failed;
  if (turn.status === 'awaiting_approval') return EXIT.suspended;
  return EXIT.ok;
}

function outcomeLine(turn: StoredTurn): string {
  const outcome = turn.outcome;
  if (outcome === null) return turn.status === 'awaiting_approval' ? 'waiting for approval' : `status ${turn.status}`;
  if (outcome.status === 'stopped') return `stopped: ${outcome.stopReason}`;
  if (outcome.status === 'cancelled') return `cancelled: ${outcome.reason}`;
  return `failed: ${outcome.error.kind}: ${outcome.error.message}`;
}

/**
 * The turn as lines: a header, the transcript (one line per message), the decisions, the outcome,
 * and for a parked turn the commands that decide it. Everything from the model, tools or the
 * database is printed through safeText.
 */
export function turnLines(turn: StoredTurn, url: string, agentsFile?: string): string[] {
  const lines = [`turn ${turn.id} · agent ${turn.agent} · ${turn.status}`, ...turn.transcript.map(messageLine)];
  for (const d of turn.decisions) {
    const what =
      d.kind === 'cancel'
        ? `cancel (${d.reason ?? ''})`
        : `${d.callId ?? ''} ${d.decision?.type ?? 'unreadable (not applied; the call still waits)'}`;
    lines.push(`decision: ${what} · ${d.status}`);
  }
  lines.push(`→ ${outcomeLine(turn)}`);
  if (turn.parked.length > 0) {
    const store = storeArgs(url);
    lines.push('', 'Waiting for a decision on:');
    // The input that runs if approved (a before-hook may have rewritten the model's).
    for (const p of turn.parked) {
      lines.push(`  ${p.call.id} ${p.call.name} ${JSON.stringify(p.input === undefined ? p.call.input : p.input)}`);
      if (p.expiresAt !== undefined)
        lines.push(`    decide by ${new Date(p.expiresAt).toISOString()} (then it is rejected as expired)`);
    }
    lines.push('Decide each one, then run a worker to continue the turn:');
    const first = turn.parked[0]?.call.id ?? '';
    lines.push(`  ${shellCommand(['turnkit', 'approve', turn.id, first, ...store])}`);
    lines.push(`  ${shellCommand(['turnkit', 'reject', turn.id, first, '--reason', 'reason for the model', ...store])}`);
    lines.push(`  ${shellCommand(['turnkit', 'worker', '--agents', agentsFile ?? 'AGENTS_FILE', '--until-idle', ...store])}`);
  }
  return lines.map((line) => safeText(line));
}

/** What each command's register function gets from program.ts. */
export interface CommandKit {
  /** Gives a command turnkit's error handling (one line, exit 2). */
  readonly configure: (command: Command) => Command;
  readonly setExit: (code: number) => void;
}
