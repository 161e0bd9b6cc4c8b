// Approvals on a terminal: one prompt per parked call (approve / approve always for this tool /
// reject with a reason), built on @inquirer/prompts. Ctrl+C or a closed stdin at a prompt means
// the person quit: the turn is cancelled, not answered with rejections.

import type { ApprovalDecision, ParkedCall } from '@turnkit/core';
import type { ApproveFn } from '@turnkit/inline';
import pc from 'picocolors';
import { preview } from './format.js';
import { safeText } from './safe-text.js';

type Choice = 'approve' | 'always' | 'reject';

/** The two prompts the approver uses (inquirer's `select` and `input`; replaceable in tests). */
export interface ApprovalPrompts {
  readonly select: (
    config: { message: string; choices: { name: string; value: Choice }[] },
    context: { signal: AbortSignal },
  ) => Promise<Choice>;
  readonly input: (config: { message: string }, context: { signal: AbortSignal }) => Promise<string>;
}

export interface PromptApproverOptions {
  /** Called before the first prompt (stops the spinner). */
  readonly beforePrompt: () => void;
  /** Cancels the turn, with the reason the timeline shows; called when the person quits at a prompt. */
  readonly cancel: (reason: string) => void;
  readonly prompts?: ApprovalPrompts;
  /** The stream the prompts read (default process.stdin): its end means nobody can answer. */
  readonly stdin?: NodeJS.ReadableStream;
}

/** Thrown (after cancelling the turn) when the person quit at an approval prompt. */
export class ApprovalQuit extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'ApprovalQuit';
  }
}

/** inquirer's prompts, imported at the first prompt: a turn that never asks does not load them. */
const inquirer: ApprovalPrompts = {
  select: async (config, context) => (await import('@inquirer/prompts')).select(config, context),
  input: async (config, context) => (await import('@inquirer/prompts')).input(config, context),
};

/** An `approve` callback that asks the person at the terminal about each parked call. */
export function promptApprover(options: PromptApproverOptions): ApproveFn {
  const prompts = options.prompts ?? inquirer;
  const stdin = options.stdin ?? process.stdin;
  return async (pending: readonly ParkedCall[]) => {
    options.beforePrompt();
    // inquirer's own ExitPromptError covers Ctrl+C, and stdin's end only once nothing else keeps
    // the process alive; this signal closes the prompt as soon as stdin ends.
    const closed = new AbortController();
    const onEnd = (): void => closed.abort();
    stdin.once('end', onEnd);
    stdin.once('close', onEnd);
    try {
      return await ask(pending, prompts, closed.signal);
    } catch (error) {
      const reason = quitReason(error, closed.signal);
      if (reason === null) throw error;
      options.cancel(reason);
      throw new ApprovalQuit(reason);
    } finally {
      stdin.removeListener('end', onEnd);
      stdin.removeListener('close', onEnd);
    }
  };
}

async function ask(
  pending: readonly ParkedCall[],
  prompts: ApprovalPrompts,
  signal: AbortSignal,
): Promise<Record<string, ApprovalDecision>> {
  // A Map, not an object literal: a call id such as `__proto__` is a plain key (see the return).
  const decisions = new Map<string, ApprovalDecision>();
  const alwaysTools = new Set<string>();
  for (const { call, input, reason } of pending) {
    if (alwaysTools.has(call.name)) {
      decisions.set(call.id, { type: 'approve', remember: 'tool' });
      continue;
    }
    // The name, id, input and reason come from the model: printed with control characters escaped.
    // The input shown is the one that runs if approved (what the dispatcher's hooks left).
    const name = safeText(call.name);
    const choice = await prompts.select(
      {
        message: `${pc.cyan(name)} ${pc.dim(safeText(call.id))} ${preview(input ?? call.input, 100)}${reason === undefined ? '' : pc.dim(` (${safeText(reason)})`)}: allow it?`,
        choices: [
          { name: 'Approve', value: 'approve' },
          { name: `Approve always for '${name}' in this turn`, value: 'always' },
          { name: 'Reject (give a reason to the model)', value: 'reject' },
        ],
      },
      { signal },
    );
    if (choice === 'approve') decisions.set(call.id, { type: 'approve' });
    else if (choice === 'always') {
      alwaysTools.add(call.name);
      decisions.set(call.id, { type: 'approve', remember: 'tool' });
    } else {
      const why = (await prompts.input({ message: 'Reason for the model (optional):' }, { signal })).trim();
      decisions.set(call.id, why === '' ? { type: 'reject' } : { type: 'reject', reason: why });
    }
  }
  // Object.fromEntries defines own properties (an assignment of `__proto__` would set the prototype).
  return Object.fromEntries(decisions);
}

/**
 * Why the person quit, or null for any other error. inquirer throws ExitPromptError on Ctrl+C
 * ("… with SIGINT") and when the process is about to exit (stdin ended, nothing else to do), and
 * AbortPromptError when our stdin-closed signal fired. Matched by name: @inquirer/prompts does
 * not re-export the classes.
 */
function quitReason(error: unknown, stdinClosed: AbortSignal): string | null {
  if (!(error instanceof Error)) return null;
  if (error.name === 'ExitPromptError') {
    return /SIGINT/.test(error.message)
      ? 'interrupted with Ctrl+C at the approval prompt'
      : 'the approval prompt was closed (stdin ended) before a decision';
  }
  if (error.name === 'AbortPromptError' && stdinClosed.aborted)
    return 'the approval prompt was closed (stdin ended) before a decision';
  return null;
}
