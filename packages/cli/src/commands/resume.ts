// `turnkit resume`: a suspended-turn file, checked whole before anything it names is loaded.

import { isAbsolute, relative } from 'node:path';
import type { ApprovalDecision } from '@turnkit/core';
import { activeTurn } from '@turnkit/core/internal';
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { loadScenarioFile } from '../scenario.js';
import { readSuspended } from '../suspended.js';
import { runTurnCommand, undecidedIds } from '../turn.js';
import { outputFlags, type RunFlags } from './run.js';
import type { CommandKit } from './store-common.js';

interface ResumeFlags extends Omit<RunFlags, 'provider' | 'model' | 'baseUrl' | 'store' | 'id'> {
  readonly approve: string[];
  readonly reject: string[];
  readonly scenario?: string;
}

/** `turnkit resume`: a suspended-turn file, checked whole before anything it names is loaded. */
export function addResumeCommand(program: Command, { configure, setExit }: CommandKit, examples: string): void {
  configure(program.command('resume'))
    .description('Continue a suspended turn with a decision for each pending call.')
    .argument('<file>', 'the suspended-turn file `turnkit run` wrote')
    .option('--approve <id>', 'approve the pending call with this id (repeatable)', collect, [])
    .option('--reject <id[=reason]>', 'reject the pending call, optionally telling the model why (repeatable)', collect, [])
    .option('--stream', 'use the streaming interpreter')
    .option('--json', 'print the trace as NDJSON instead of the timeline')
    .option('--trace <file>', 'save the trace of the resumed part')
    .option('--save <file>', 'where to write the turn if it suspends again (default: FILE itself)')
    .option(
      '--scenario <file>',
      'load the tools from this scenario instead of the path FILE records (its sha256 must still match)',
    )
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  $ turnkit resume turnkit-suspended-turn-1a2b3c4d.json --approve call_2',
        "  $ turnkit resume turnkit-suspended-turn-1a2b3c4d.json --approve call_2 --reject call_3='keep the cache'",
        `  $ turnkit resume turn.json --approve call_2 --scenario ${examples}/delete-files.ts`,
      ].join('\n'),
    )
    .action(async (file: string, flags: ResumeFlags) => {
      // The whole file is checked before anything it names is loaded: a resume file is data.
      const read = await readSuspended(file);
      const { saved } = read;
      // In a tree, the decisions already taken are those of the turn that waits (core's activeTurn).
      const decisions = decisionsFrom(flags, undecidedIds(saved.pending, activeTurn(saved.state).state.batch?.decisions));
      const scenarioPath = flags.scenario ?? saved.scenario;
      const scenario = await loadScenarioFile(
        scenarioPath,
        { savedIn: file, path: saved.scenario, sha256: saved.scenarioSha256 },
        // The agent that ran; its turn has started, so its input is in the saved state.
        saved.agent === undefined ? undefined : { agent: saved.agent, input: '' },
      );
      const stream = flags.stream === true || saved.options.stream;
      setExit(
        await runTurnCommand({
          scenarioFile: flags.scenario ?? shortPath(saved.scenario),
          scenario,
          provider: saved.options.provider,
          ...outputFlags({ ...flags, stream }),
          resume: { file, read, decisions },
        }),
      );
    });
}

/** The path relative to the working directory when it lies below it (shorter timeline headers). */
function shortPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? path : rel;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** The decisions of `--approve ID` / `--reject ID[=reason]`, checked against the pending call ids. */
function decisionsFrom(flags: ResumeFlags, pending: readonly string[]): Record<string, ApprovalDecision> {
  const list = pending.join(', ');
  if (flags.approve.length === 0 && flags.reject.length === 0) {
    throw new UsageError(`Give a decision for the pending calls (${list}): --approve ID or --reject ID[=reason].`);
  }
  // A Map, not an object literal: every id core accepts (`__proto__`, `constructor`, …) is a plain key.
  const decisions = new Map<string, ApprovalDecision>();
  const add = (id: string, decision: ApprovalDecision): void => {
    if (!pending.includes(id)) throw new UsageError(`'${id}' is not a pending call of this turn; the pending calls are ${list}.`);
    if (decisions.has(id))
      throw new UsageError(`'${id}' was given more than one decision; give each call one --approve or --reject.`);
    decisions.set(id, decision);
  };
  for (const id of flags.approve) add(id, { type: 'approve' });
  for (const item of flags.reject) {
    const at = item.indexOf('=');
    const id = at === -1 ? item : item.slice(0, at);
    const reason = at === -1 ? '' : item.slice(at + 1).trim();
    add(id, reason === '' ? { type: 'reject' } : { type: 'reject', reason });
  }
  // Object.fromEntries defines own properties (an assignment of `__proto__` would set the prototype).
  return Object.fromEntries(decisions);
}
