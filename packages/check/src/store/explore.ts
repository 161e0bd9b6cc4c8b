// Exhaustive breadth-first exploration of the model world over a protocol (the real one by
// default), with state hashing (a world is keyed by its JSON). The safety invariants are checked
// on every edge; "every turn can still end" is checked on the explored graph afterwards, by
// walking the edges backwards from the worlds where every turn has ended.

import { protocol as realProtocol, type Protocol } from '@turnkit/store/internal';
import type { World, WorldConfig } from './types.js';
import { actions, allDone, initialWorld } from './world.js';

export type StoreInvariant = 1 | 2 | 3 | 4 | 5 | 6 | 7;

/** The invariants, by number. */
export const STORE_INVARIANTS: Readonly<Record<StoreInvariant, string>> = {
  1: "a call's side effect starts at most once",
  2: 'a result once journaled is never replaced',
  3: 'a decision acknowledged to its sender is applied exactly once',
  4: 'at most one worker commits a write for a turn at any fencing token',
  5: 'every turn can still reach a terminal state (no deadlock)',
  6: 'a call is given up as interrupted only after the lease it started under ended',
  7: "a thread's turns never run at once: at most one of them has started and not ended",
};

/** A store invariant broken in some world of the exploration, with the shortest path to it. */
export interface StoreViolation {
  /** The broken invariant (`STORE_INVARIANTS` describes each). */
  readonly invariant: StoreInvariant;
  /** What is wrong, in words. */
  readonly message: string;
  /** The actions from the start to the offending edge (the shortest such path: breadth-first). */
  readonly path: readonly string[];
}

export interface StoreCheckOptions {
  readonly config: WorldConfig;
  /** The protocol under test (default: the one the worker runs). */
  readonly protocol?: Protocol;
  /** Stop expanding after this many steps from the start (default 500; the result says if it was reached). */
  readonly maxDepth?: number;
  /** Stop after the depth level where this invariant was first found broken (for mutants, whose worlds may not be finite). */
  readonly stopAt?: StoreInvariant;
  /** Called after each depth level. */
  readonly onProgress?: (progress: { states: number; frontier: number; depth: number }) => void;
}

/** What `exploreStore` found: the size of the explored world space, ended and deadlocked worlds, and the violations. */
export interface StoreCheckResult {
  /** Distinct worlds reached. */
  readonly states: number;
  /** Edges taken: (world, action) pairs stepped and checked. */
  readonly transitions: number;
  /** The deepest level expanded. */
  readonly depth: number;
  /** Worlds where every turn has ended. */
  readonly ended: number;
  /** Worlds from which some turn can no longer end. */
  readonly deadlocked: number;
  /** The first violation of each invariant broken (its shortest counterexample). */
  readonly violations: readonly StoreViolation[];
  /** Violations found in all. */
  readonly violationCount: number;
  /** True when every reachable world was expanded. */
  readonly exhaustive: boolean;
  /** How long the exploration took, in ms. */
  readonly ms: number;
}

/** Explores every world reachable from the initial one, checking the invariants on every edge. */
export function exploreStore(options: StoreCheckOptions): StoreCheckResult {
  const started = performance.now();
  const { config } = options;
  const protocol = options.protocol ?? realProtocol;
  const maxDepth = options.maxDepth ?? 500;
  const ids = new Map<string, number>();
  const parent: number[] = [];
  const via: string[] = [];
  const from: number[] = [];
  const to: number[] = [];
  const done: number[] = [];
  const first = new Map<StoreInvariant, StoreViolation>();
  let violationCount = 0;

  const pathTo = (id: number, last: string): string[] => {
    const path = [last];
    for (let n = id; parent[n] !== -1; n = parent[n] as number) path.push(via[n] as string);
    return path.reverse();
  };
  const intern = (world: World, up: number, label: string): { id: number; fresh: boolean } => {
    const key = JSON.stringify(world);
    const known = ids.get(key);
    if (known !== undefined) return { id: known, fresh: false };
    const id = ids.size;
    ids.set(key, id);
    parent.push(up);
    via.push(label);
    if (allDone(world)) done.push(id);
    return { id, fresh: true };
  };

  const start = initialWorld(config);
  intern(start, -1, '');
  let frontier: { id: number; world: World }[] = [{ id: 0, world: start }];
  let depth = 0;
  while (frontier.length > 0 && depth < maxDepth) {
    const next: { id: number; world: World }[] = [];
    for (const node of frontier) {
      for (const action of actions(config, node.world, protocol)) {
        for (const v of edgeViolations(config, node.world, action.next)) {
          violationCount += 1;
          if (!first.has(v.invariant)) first.set(v.invariant, { ...v, path: pathTo(node.id, action.label) });
        }
        const { id, fresh } = intern(action.next, node.id, action.label);
        from.push(node.id);
        to.push(id);
        if (fresh) next.push({ id, world: action.next });
      }
    }
    frontier = next;
    depth += 1;
    options.onProgress?.({ states: ids.size, frontier: frontier.length, depth });
    if (options.stopAt !== undefined && first.has(options.stopAt)) break;
  }

  const stuck = frontier.length === 0 ? cannotEnd(ids.size, from, to, done) : [];
  if (stuck.length > 0) {
    violationCount += stuck.length;
    const id = stuck[0] as number;
    first.set(5, {
      invariant: 5,
      message: `${stuck.length} reachable worlds have a turn that can no longer end; the first is reached by this path.`,
      path: pathTo(parent[id] as number, via[id] as string),
    });
  }
  return {
    states: ids.size,
    transitions: from.length,
    depth,
    ended: done.length,
    deadlocked: stuck.length,
    violations: [...first.values()].sort((a, b) => a.invariant - b.invariant),
    violationCount,
    exhaustive: frontier.length === 0,
    ms: Math.round(performance.now() - started),
  };
}

/** The worlds (by id, ascending: the first is the shallowest) from which no world where every turn ended is reachable. */
function cannotEnd(count: number, from: readonly number[], to: readonly number[], done: readonly number[]): number[] {
  const incoming: number[][] = Array.from({ length: count }, () => []);
  for (let e = 0; e < from.length; e++) (incoming[to[e] as number] as number[]).push(from[e] as number);
  const canEnd = new Uint8Array(count);
  const queue = [...done];
  for (const id of done) canEnd[id] = 1;
  while (queue.length > 0) {
    const id = queue.pop() as number;
    for (const up of incoming[id] as number[]) {
      if (canEnd[up] === 1) continue;
      canEnd[up] = 1;
      queue.push(up);
    }
  }
  const stuck: number[] = [];
  for (let id = 0; id < count; id++) if (canEnd[id] === 0) stuck.push(id);
  return stuck;
}

type EdgeViolation = Omit<StoreViolation, 'path'>;

/** A thread's turns that have started (been claimed) and not ended, by thread. */
function runningByThread(config: WorldConfig, world: World): Map<string, string[]> {
  const running = new Map<string, string[]>();
  world.rows.forEach((row, t) => {
    const spec = config.turns[t];
    if (spec?.thread === undefined || row.token === 0 || row.status === 'done') return;
    running.set(spec.thread, [...(running.get(spec.thread) ?? []), spec.id]);
  });
  return running;
}

/** The safety invariants (1–4, 6, 7) on one edge: what `after` breaks that `before` did not. */
export function edgeViolations(config: WorldConfig, before: World, after: World): EdgeViolation[] {
  const out: EdgeViolation[] = [];
  const turn = (t: number | string): string => config.turns[Number(t)]?.id ?? String(t);
  const call = (t: number, c: number): string => `${turn(t)}/${config.turns[t]?.calls[c]?.id ?? c}`;
  after.ghost.ran.forEach((calls, t) => {
    calls.forEach((n, c) => {
      if (n > 1 && (before.ghost.ran[t]?.[c] ?? 0) <= 1)
        out.push({ invariant: 1, message: `call ${call(t, c)}'s side effect started ${n} times.` });
    });
  });
  after.journal.forEach((calls, t) => {
    calls.forEach((row, c) => {
      const was = before.journal[t]?.[c];
      if (was === undefined) return;
      if (was.result !== null && row.result !== was.result)
        out.push({
          invariant: 2,
          message: `call ${call(t, c)}'s journaled result '${was.result}' was replaced by '${row.result}'.`,
        });
      if (was.result === null && row.result === 'interrupted' && !(after.ghost.ended[t] ?? []).includes(row.started ?? -1))
        out.push({
          invariant: 6,
          message: `call ${call(t, c)} was journaled interrupted while the lease it started under (token ${row.started}) was live.`,
        });
    });
  });
  for (const entry of after.inbox) {
    const was = before.inbox.find((e) => e.id === entry.id);
    const what =
      entry.kind === 'cancel' ? `the cancel of ${turn(entry.turn)}` : `the decision for ${turn(entry.turn)}/${entry.call}`;
    if (entry.timesApplied > 1 && (was?.timesApplied ?? 0) <= 1)
      out.push({ invariant: 3, message: `${what} was applied ${entry.timesApplied} times.` });
    // When the turn ends, each row was applied once, or closed as ignored because the turn ended (was cancelled) before it.
    const ended = after.rows[entry.turn]?.status === 'done' && before.rows[entry.turn]?.status !== 'done';
    if (ended && entry.timesApplied !== 1 && !(entry.timesApplied === 0 && entry.status === 'ignored'))
      out.push({ invariant: 3, message: `turn ${turn(entry.turn)} ended with ${what} applied ${entry.timesApplied} times.` });
  }
  const runningBefore = runningByThread(config, before);
  for (const [thread, turns] of runningByThread(config, after)) {
    if (turns.length > 1 && (runningBefore.get(thread)?.length ?? 0) <= 1)
      out.push({
        invariant: 7,
        message: `turns ${turns.join(' and ')} of thread ${thread} have both started and neither has ended.`,
      });
  }
  const fresh = after.ghost.writers.filter((w) => !before.ghost.writers.includes(w));
  for (const entry of fresh) {
    const [t = '', token, worker] = entry.split(':');
    const others = after.ghost.writers.filter((w) => w.startsWith(`${t}:${token}:`) && w !== entry);
    if (others.length > 0)
      out.push({
        invariant: 4,
        message: `worker w${worker} wrote turn ${turn(t)} at token ${token}, which ${others.map((o) => `w${o.split(':')[2]}`).join(', ')} also wrote at.`,
      });
  }
  return out;
}
