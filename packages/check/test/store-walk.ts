// Walking the protocol's model world by action labels, for tests that follow one run.

import type { WorldConfig } from '@turnkit/check/internal';
import type { World } from '../src/store/types.ts';
import { actions } from '../src/store/world.ts';
import { protocol } from '@turnkit/store/internal';

/** Takes the actions `labels` names, in order; one that is not enabled is an error naming those that are. */
export function walk(config: WorldConfig, world: World, labels: readonly string[]): World {
  let at = world;
  for (const label of labels) {
    const enabled = actions(config, at, protocol);
    const found = enabled.find((a) => a.label === label);
    if (found === undefined) throw new Error(`'${label}' is not enabled; enabled: ${enabled.map((a) => a.label).join(' | ')}`);
    at = found.next;
  }
  return at;
}

/**
 * The steps of worker `w` running the one call `call` of t1's batch at `token`: the batch's journal
 * read, its state (`phase`) written with the call's start, the tool run, its result journaled.
 */
export function runsCall(w: string, call: string, phase: string, token = 1): string[] {
  return [
    `${w} reads t1's journal`,
    `${w} commits t1 ${phase} at token ${token} with the start of t1/${call}`,
    `${w} runs t1/${call}'s tool`,
    `${w} journals the result for t1/${call}`,
  ];
}

/** The shortest run to the end of the first exploration: the approval arrives while the worker still holds the parked turn. */
export const STRAIGHT_RUN: readonly string[] = [
  'w0 claims t1',
  ...runsCall('w0', 'plain', 'dispatching'),
  'w0 commits t1 awaiting_approval at token 1',
  'user approves t1/parked',
  "w0 reads t1's inbox",
  ...runsCall('w0', 'parked', 'executing_approved'),
  'w0 commits t1 done at token 1',
];
