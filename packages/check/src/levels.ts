// The links back to the start that the breadth-first explorations (`exploreTurn`, `checkAgent`)
// keep instead of their nodes: for each level, how each node was reached. A path is rebuilt by
// replaying the choices from the start (the explorations are deterministic: invariant 2 checks
// `step`), so a node costs a few bytes here whatever its state.

/** How each node of a level was reached: its parent's index in the level before, and the index of its edge among the parent's. */
export interface Level {
  readonly parents: Int32Array;
  readonly choices: Uint8Array | Int32Array;
}

/** The edge choices from the start to node `at` of the last level in `levels` (-1: the start itself), first to last. */
export function choicesTo(levels: readonly Level[], at: number): number[] {
  const choices: number[] = [];
  for (let d = levels.length - 1, i = at; d >= 0 && i >= 0; d--) {
    const level = levels[d]!;
    choices.push(level.choices[i]!);
    i = level.parents[i]!;
  }
  return choices.reverse();
}

/** Bytes the links of `levels` hold. */
export const linkBytes = (levels: readonly Level[]): number =>
  levels.reduce((sum, level) => sum + level.parents.byteLength + level.choices.byteLength, 0);
