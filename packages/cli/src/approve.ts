// Approvals on a terminal: one prompt per parked call (approve / approve always for this tool /
// reject with a reason), built on @inquirer/prompts.

import type { ApprovalDecision, ParkedCall } from '@turnkit/core';
import type { ApproveFn } from '@turnkit/inline';
import { input, select } from '@inquirer/prompts';
import pc from 'picocolors';
import { preview } from './format.js';

/** An `approve` callback that asks the person at the terminal about each parked call. */
export function promptApprover(beforePrompt: () => void): ApproveFn {
  return async (pending: readonly ParkedCall[]) => {
    beforePrompt();
    const decisions: Record<string, ApprovalDecision> = {};
    const alwaysTools = new Set<string>();
    for (const { call, reason } of pending) {
      if (alwaysTools.has(call.name)) {
        decisions[call.id] = { type: 'approve', remember: 'tool' };
        continue;
      }
      const choice = await select({
        message: `${pc.cyan(call.name)} ${pc.dim(call.id)} ${preview(call.input, 100)}${reason === undefined ? '' : pc.dim(` (${reason})`)}: allow it?`,
        choices: [
          { name: 'Approve', value: 'approve' as const },
          { name: `Approve always for '${call.name}' in this turn`, value: 'always' as const },
          { name: 'Reject (give a reason to the model)', value: 'reject' as const },
        ],
      });
      if (choice === 'approve') decisions[call.id] = { type: 'approve' };
      else if (choice === 'always') {
        alwaysTools.add(call.name);
        decisions[call.id] = { type: 'approve', remember: 'tool' };
      } else {
        const why = (await input({ message: 'Reason for the model (optional):' })).trim();
        decisions[call.id] = why === '' ? { type: 'reject' } : { type: 'reject', reason: why };
      }
    }
    return decisions;
  };
}
