// Walking the protocol's model world by action labels, for tests that follow one run.

import { actions, protocol, type World, type WorldConfig } from '@turnkit/store/protocol';

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

/** The steps of worker `w` running call `call` of t1 once it read the journal: start journaled, tool run, result journaled. */
export function runsCall(w: string, call: string): string[] {
  return [`${w} journals the start of t1/${call}`, `${w} runs t1/${call}'s tool`, `${w} journals the result for t1/${call}`];
}
