// Exhaustive breadth-first exploration of the real reducer over the finite alphabet of
// `alphabet.ts`, checking the invariants on every edge. Nodes are keyed by the turn state plus the
// invariant monitor, so the history invariants stay sound even when a (buggy) reducer reaches one
// state along two histories; `states` counts distinct turn states. Nodes and states are kept as
// 64-bit fingerprints (fingerprint.ts) and each node as its link back to the start, so a stored
// node costs about 40 bytes whatever its state; only the frontier holds states. The purity
// re-runs of invariants 2 and 3 run on the edges `puritySample` picks; the checks that depend on
// a state alone (core's state invariants and parseTurnState, invariant 3) run once per distinct
// state, on the first edge that reaches it. With `workers`, the levels are explored on worker
// threads (explore-parallel.ts) with the same result.

import { createTurn, isTerminal, step as coreStep } from '@turnkit/core';
import { errorMessage } from '@turnkit/core/internal';
import type { TurnLimitsInput, TurnState } from '@turnkit/core';
import { labelledEventsFor, type LabelledEvent } from './alphabet.js';
import { Fingerprint, FingerprintSet, parseSampled, sampled, ValueFingerprint } from './fingerprint.js';
import { balancePlan, ExploreWorkers, type FrontierNode, type Reply, type RankedViolation } from './explore-parallel.js';
import {
  initialMonitor,
  StepChecker,
  stateInvariantProblems,
  textParseProblem,
  type InvariantNumber,
  type TraceStep,
} from './invariants.js';
import { HEAP_LOOK_EVERY, heapNearLimit } from './heap.js';
import { choicesTo, linkBytes, type Level } from './levels.js';
import type { StepFunction } from './logic.js';

export interface ExploreOptions {
  readonly limits: TurnLimitsInput;
  /** Stop expanding after this many events from the start (the result says if it was reached). */
  readonly maxDepth: number;
  /** The reducer under test (default: core's `step`). */
  readonly step?: StepFunction;
  /** The alphabet (default: `labelledEventsFor`). */
  readonly events?: (state: TurnState) => readonly LabelledEvent[];
  /** Called after each depth level. */
  readonly onProgress?: (progress: { states: number; frontier: number; depth: number }) => void;
  /** Keep at most this many violations (default 50); `violationCount` has the total. */
  readonly maxViolations?: number;
  /**
   * The purity re-runs (`step` on deep-frozen copies, invariant 2, and on a JSON round trip of the
   * state, invariant 3) run on one edge in this many (the edges of one expanded node in this
   * many), and the parse check (parseTurnState gives
   * the state back unchanged, invariant 3) on one distinct state in this many; each picked by a
   * hash, the same on worker threads (default 1: every edge and every state). Every other check
   * runs on every edge, and core's state invariants on every distinct state.
   */
  readonly puritySample?: number;
  /**
   * Stop at the end of the depth level where the first violation was found (default false: explore
   * everything). The violations found are still the shortest ones; the result is then not exhaustive.
   */
  readonly stopAtViolation?: boolean;
  /**
   * Worker threads to explore on (default 1: this thread). With more, each worker expands its part
   * of each level and checks the edges out of it, keeping the states it makes (the frontiers are
   * evened out before a level when one worker holds more than its share); the worker a state's
   * fingerprint falls to decides whether it is new. The result is the same as on one
   * thread. Only with core's `step` and the default alphabet (workers import them themselves),
   * and without `onProgress` between levels being able to stop them any sooner than a level.
   */
  readonly workers?: number;
}

export interface ExploreViolation {
  readonly invariant: InvariantNumber;
  readonly message: string;
  /** The event labels from the start to the offending step, and the events themselves. */
  readonly path: readonly string[];
  readonly events: readonly unknown[];
}

/**
 * What `exploreTurn` found: the size of the turn machine's explored space, its terminal outcomes, and every invariant
 * violation.
 */
export interface ExploreResult {
  /** Distinct turn states reached (terminal ones included). */
  readonly states: number;
  /** Nodes stored: distinct (turn state, invariant monitor) pairs, each expanded once. */
  readonly nodes: number;
  /** Edges taken: (state, event) pairs stepped and checked. */
  readonly transitions: number;
  /** Distinct terminal states per outcome, such as `stopped:completed` or `failed:incomplete_batch`. */
  readonly terminalOutcomes: Readonly<Record<string, number>>;
  /** The violations found, the first `maxViolations` of them, each with its path. */
  readonly violations: readonly ExploreViolation[];
  /** Violations found in all. */
  readonly violationCount: number;
  /** The deepest level expanded. */
  readonly depth: number;
  /** True when every reachable state was expanded (the frontier ran empty before `maxDepth`). */
  readonly exhaustive: boolean;
  /**
   * What stopped the exploration before every reachable state was expanded: `maxDepth` levels
   * were expanded, `stopAtViolation` ended it at the level of the first violation (`violation`),
   * or (`memory`) a thread's heap reached most of what Node allows it (three quarters of it on
   * the default heap), where going on would risk the process; null when it is exhaustive.
   */
  readonly cutOff: 'maxDepth' | 'violation' | 'memory' | null;
  /** How long the exploration took, in ms. */
  readonly ms: number;
  /**
   * Bytes held for the nodes stored, whatever their states: the fingerprint tables (of nodes and
   * of states, 16 bytes a slot, between a quarter and half full) and each node's link back to the
   * start (5 bytes). The frontier's states, held only while their level is expanded, are not in it.
   */
  readonly storedBytes: number;
}

/** A node waiting in the frontier. */
type Open = FrontierNode;

const PURE = { purity: true, parseStates: false, stateInvariants: false } as const;
const SAMPLED_OUT = { purity: false, parseStates: false, stateInvariants: false } as const;

/** The options of `exploreTurn` that are numbers, checked, with their defaults. */
function settings(options: ExploreOptions): { maxViolations: number; puritySample: number; workers: number } {
  const maxViolations = options.maxViolations ?? 50;
  const puritySample = options.puritySample ?? 1;
  if (!Number.isInteger(puritySample) || puritySample < 1)
    throw new TypeError(`exploreTurn: puritySample must be a whole number ≥ 1, got ${String(options.puritySample)}.`);
  const workers = options.workers ?? 1;
  if (!Number.isInteger(workers) || workers < 1 || workers > 64)
    throw new TypeError(`exploreTurn: workers must be a whole number from 1 to 64, got ${String(options.workers)}.`);
  if (workers > 1 && (options.step !== undefined || options.events !== undefined))
    throw new TypeError(
      "exploreTurn: workers explore core's step and the default alphabet only (a function cannot cross to a worker thread); leave out step and events, or workers.",
    );
  return { maxViolations, puritySample, workers };
}

/**
 * Explores every state reachable from `createTurn({ limits })` within `maxDepth` events.
 *
 * @example
 * const result = exploreTurn({ limits: { maxIterations: 2, loopThreshold: 2, maxOutputRepairs: 1 }, maxDepth: 60 });
 * if (result.violations.length > 0 || !result.exhaustive) throw new Error('model check failed');
 */
export function exploreTurn(options: ExploreOptions): ExploreResult {
  const started = performance.now();
  const run = options.step ?? coreStep;
  const alphabet = options.events ?? labelledEventsFor;
  const { maxViolations, puritySample, workers } = settings(options);
  if (workers > 1) return exploreInWorkers(options, workers, maxViolations, puritySample, started);
  const initial = createTurn({ id: 'turn-1', limits: options.limits });
  const limits = initial.limits;
  const pureOptions = { ...PURE, step: run };
  const sampledOutOptions = { ...SAMPLED_OUT, step: run };

  // Core's step never changes an object it was given, so the fingerprints of the fields it shares
  // between states are reused; a reducer under test gets its states hashed whole.
  const reuse = options.step === undefined;
  const hash = new ValueFingerprint({ reuse });
  /** The monitors' own, so that the two do not take each other's reused fields. */
  const monitorHash = new ValueFingerprint({ reuse: true });
  const checker = new StepChecker();
  const violations: ExploreViolation[] = [];
  const levels: Level[] = [];
  let violationCount = 0;
  let transitions = 0;

  /** Violation `at` an edge: `entry` taken from node `index` of the last level (or at the start). */
  const report = (index: number, entry: LabelledEvent | null, invariant: InvariantNumber, message: string): void => {
    violationCount += 1;
    if (violations.length >= maxViolations) return;
    const path = replayPath(initial, levels, index, run, alphabet);
    if (entry !== null) path.push(entry);
    violations.push({ invariant, message, path: path.map((e) => e.label), events: path.map((e) => e.event) });
  };

  const nodes = new NodeTable(puritySample, report);
  const visit = nodes.visit.bind(nodes);

  const startMonitor = initialMonitor(initial);
  monitorHash.value(startMonitor);
  hash.value(initial);
  let frontier: Open[] = [
    {
      state: initial,
      stateHi: hash.hi,
      stateLo: hash.lo,
      monitor: startMonitor,
      monitorHi: monitorHash.hi,
      monitorLo: monitorHash.lo,
    },
  ];
  visit(initial, hash.hi, hash.lo, frontier[0]!.monitorHi, frontier[0]!.monitorLo, -1, null);
  let depth = 0;
  let cut: Cut = null;
  while (frontier.length > 0 && depth < options.maxDepth) {
    const next: Open[] = [];
    const parents: number[] = [];
    const events: number[] = [];
    for (let index = 0; index < frontier.length; index++) {
      if (index % HEAP_LOOK_EVERY === HEAP_LOOK_EVERY - 1 && heapNearLimit()) {
        cut = 'memory';
        break;
      }
      const { state, stateHi, stateLo, monitor, monitorHi, monitorLo } = frontier[index]!;
      const entries = alphabet(state);
      if (entries.length > 256)
        throw new RangeError(`exploreTurn: the alphabet gave ${entries.length} events for one state; at most 256.`);
      const checks = sampled(index, depth, puritySample) ? pureOptions : sampledOutOptions;
      for (let e = 0; e < entries.length; e++) {
        const entry = entries[e]!;
        transitions += 1;
        let record: TraceStep;
        try {
          const [after, effects] = run(state, entry.event);
          record = { state, event: entry.event, next: after, effects };
        } catch (error) {
          record = { state, event: entry.event, next: state, effects: [], thrown: errorMessage(error) };
        }
        const nextMonitor = checker.check(limits, record, depth, monitor, checks);
        if (checker.violations.length > 0) {
          for (const v of checker.violations) report(index, entry, v.invariant, v.message);
          checker.violations.length = 0;
        }
        if (record.thrown !== undefined) continue;
        let mHi = monitorHi;
        let mLo = monitorLo;
        if (nextMonitor !== monitor) {
          monitorHash.value(nextMonitor);
          mHi = monitorHash.hi;
          mLo = monitorHash.lo;
        }
        // The state given back as it was (a terminal state absorbing an event) has its fingerprint:
        // with its monitor unchanged too it is its own parent, visited. Only where objects never
        // change (core's step); a reducer under test might have changed it in place.
        let nHi = stateHi;
        let nLo = stateLo;
        if (record.next !== state || !reuse) {
          hash.value(record.next);
          nHi = hash.hi;
          nLo = hash.lo;
        } else if (nextMonitor === monitor) continue;
        // A terminal state is checked (absorption) but not expanded further than once.
        if (visit(record.next, nHi, nLo, mHi, mLo, index, entry) && !(isTerminal(state) && record.next === state)) {
          next.push({ state: record.next, stateHi: nHi, stateLo: nLo, monitor: nextMonitor, monitorHi: mHi, monitorLo: mLo });
          parents.push(index);
          events.push(e);
        }
      }
    }
    if (cut === null) {
      levels.push({ parents: Int32Array.from(parents), choices: Uint8Array.from(events) });
      frontier = next;
    }
    depth += 1;
    options.onProgress?.({ states: nodes.states.size, frontier: frontier.length, depth });
    const ends = levelEnds(cut, options, violationCount, frontier.length);
    if (ends !== undefined) {
      cut = ends;
      break;
    }
  }

  return {
    states: nodes.states.size,
    nodes: nodes.nodes.size,
    transitions,
    terminalOutcomes: nodes.terminalOutcomes,
    violations,
    violationCount,
    depth,
    exhaustive: frontier.length === 0 && cut === null,
    cutOff: cut ?? (frontier.length > 0 ? 'maxDepth' : null),
    ms: Math.round(performance.now() - started),
    storedBytes: nodes.nodes.bytes + nodes.states.bytes + linkBytes(levels),
  };
}

/** Reports a violation on the edge `entry` out of node `at` of the level being expanded (-1, null: the start). */
type Report = (at: number, entry: LabelledEvent | null, invariant: InvariantNumber, message: string) => void;

/** What cut an exploration short during a level, if anything. */
type Cut = 'violation' | 'memory' | null;

/**
 * Whether the exploration ends after a level, and the cut it then reports: the one taken during
 * the level, or `violation` when `stopAtViolation` ends it with states left to expand (null when
 * none are left); undefined when it goes on.
 */
function levelEnds(cut: Cut, options: ExploreOptions, violationCount: number, left: number): Cut | undefined {
  if (cut !== null) return cut;
  if (options.stopAtViolation === true && violationCount > 0) return left > 0 ? 'violation' : null;
  return undefined;
}

/**
 * The nodes and distinct states an exploration on one thread has met, by fingerprint, and the
 * terminal outcomes of its states. A new distinct state is checked alone (core's state invariants
 * and, on the states the sample picks, the parse check: invariant 3), its problems given to `report`.
 */
class NodeTable {
  readonly nodes = new FingerprintSet();
  readonly states = new FingerprintSet();
  readonly terminalOutcomes: Record<string, number> = {};
  readonly #fp = new Fingerprint();
  readonly #puritySample: number;
  readonly #report: Report;

  constructor(puritySample: number, report: Report) {
    this.#puritySample = puritySample;
    this.#report = report;
  }

  /** True when the node (the state with the monitor whose fingerprint is given) is new; reached from node `at` by `entry`. */
  visit(
    state: TurnState,
    stateHi: number,
    stateLo: number,
    monitorHi: number,
    monitorLo: number,
    at: number,
    entry: LabelledEvent | null,
  ): boolean {
    const fp = this.#fp.pair(stateHi, stateLo, monitorHi, monitorLo);
    if (!this.nodes.add(fp.hi, fp.lo)) return false;
    if (this.states.add(stateHi, stateLo)) {
      if (isTerminal(state)) {
        const label = outcomeLabel(state);
        this.terminalOutcomes[label] = (this.terminalOutcomes[label] ?? 0) + 1;
      }
      for (const problem of stateInvariantProblems(state, entry === null ? 'state' : 'state after'))
        this.#report(at, entry, 3, problem);
      if (parseSampled(stateHi, this.#puritySample)) {
        const problem = textParseProblem(JSON.stringify(state));
        if (problem !== undefined) this.#report(at, entry, 3, problem);
      }
    }
    return true;
  }
}

/** `exploreTurn` on `count` worker threads (explore-parallel.ts): the same result as on one. */
function exploreInWorkers(
  options: ExploreOptions,
  count: number,
  maxViolations: number,
  puritySample: number,
  started: number,
): ExploreResult {
  const initial = createTurn({ id: 'turn-1', limits: options.limits });
  const pool = new ExploreWorkers({ limits: options.limits, puritySample, maxViolations, count });
  try {
    const levels: Level[] = [];
    const violations: ExploreViolation[] = [];
    const terminalOutcomes: Record<string, number> = {};
    let violationCount = 0;
    let transitions = 0;
    let states = 0;
    let nodes = 0;
    let tableBytes = 0;
    /** Counts, outcomes and violations of a level's replies; the violations kept in the one-thread order. */
    const gather = (replies: readonly Reply[][]): void => {
      const ranked: RankedViolation[] = [];
      for (const reply of replies.flat()) {
        violationCount += reply.violationCount ?? 0;
        transitions += reply.transitions ?? 0;
        ranked.push(...(reply.violations ?? []));
        for (const [label, n] of Object.entries(reply.terminalOutcomes ?? {}))
          terminalOutcomes[label] = (terminalOutcomes[label] ?? 0) + n;
      }
      const last = replies[replies.length - 1]!;
      states = last.reduce((sum, r) => sum + (r.states ?? 0), 0);
      tableBytes = last.reduce((sum, r) => sum + (r.tableBytes ?? 0), 0);
      nodes = last.reduce((sum, r) => sum + (r.nodes ?? 0), 0);
      ranked.sort((a, b) => a.rank - b.rank || a.sub - b.sub || a.seq - b.seq);
      for (const v of ranked) {
        if (violations.length >= maxViolations) break;
        const path = v.rank < 0 ? [] : replayPath(initial, levels, Math.floor(v.rank / 256), coreStep, labelledEventsFor);
        if (v.rank >= 0) {
          const entry = labelledEventsFor(replayState(initial, path))[v.rank % 256];
          if (entry !== undefined) path.push(entry);
        }
        violations.push({
          invariant: v.invariant,
          message: v.message,
          path: path.map((e) => e.label),
          events: path.map((e) => e.event),
        });
      }
    };
    /** The ranks of the nodes each worker kept, merged: the next level in the one-thread order. */
    const nextLevel = (replies: readonly Reply[]): Int32Array[] => {
      const all: Array<[rank: number, worker: number, at: number]> = [];
      replies.forEach((r, w) => {
        (r.ranks ?? new Float64Array()).forEach((rank, at) => {
          all.push([rank, w, at]);
        });
      });
      all.sort((a, b) => a[0] - b[0]);
      const indices = replies.map((r) => new Int32Array(r.ranks?.length ?? 0));
      const parents = new Int32Array(all.length);
      const events = new Uint8Array(all.length);
      all.forEach(([rank, w, at], i) => {
        indices[w]![at] = i;
        parents[i] = Math.floor(rank / 256);
        events[i] = rank % 256;
      });
      if (all.length > 0 && all[0]![0] >= 0) levels.push({ parents, choices: events });
      return indices;
    };

    const start = pool.command(() => ({ kind: 'start' }));
    gather([start]);
    let indices = nextLevel(start);
    let frontier = indices.reduce((sum, a) => sum + a.length, 0);
    let depth = 0;
    let cut: Cut = null;
    while (frontier > 0 && depth < options.maxDepth) {
      const at = depth;
      const { indices: given, from } = balance(pool, indices);
      const expanded = pool.command((id) => ({ kind: 'expand', depth: at, indices: given[id]!, from: from[id]! }));
      const accepted = pool.command(() => ({ kind: 'accept' }));
      const kept = pool.command(() => ({ kind: 'keep' }));
      gather([expanded, accepted, kept]);
      // A worker whose heap filled stopped expanding part way: the level is not whole, and it is the last.
      if (expanded.some((r) => r.heapFull === true)) cut = 'memory';
      indices = nextLevel(kept);
      frontier = indices.reduce((sum, a) => sum + a.length, 0);
      depth += 1;
      options.onProgress?.({ states, frontier, depth });
      const ends = levelEnds(cut, options, violationCount, frontier);
      if (ends !== undefined) {
        cut = ends;
        break;
      }
    }
    return {
      states,
      nodes,
      transitions,
      terminalOutcomes,
      violations,
      violationCount,
      depth,
      exhaustive: frontier === 0 && cut === null,
      cutOff: cut ?? (frontier > 0 ? 'maxDepth' : null),
      ms: Math.round(performance.now() - started),
      storedBytes: tableBytes + linkBytes(levels),
    };
  } finally {
    pool.close();
  }
}

/**
 * Evens out the workers' frontiers (`balancePlan`): the givers hand their nodes to the takers.
 * The level indices of each worker's nodes, in its new frontier's order (its own left, then the
 * ones handed to it, by giver), and the givers each worker takes from.
 */
function balance(pool: ExploreWorkers, indices: readonly Int32Array[]): { indices: Int32Array[]; from: number[][] } {
  const plan = balancePlan(indices.map((a) => a.length));
  const from: number[][] = indices.map(() => []);
  if (plan.every((gifts) => gifts.length === 0)) return { indices: [...indices], from };
  pool.command((id) => ({ kind: 'give', gifts: plan[id]! }));
  const kept = indices.map((own, w) => {
    const given = new Uint8Array(own.length);
    for (const gift of plan[w]!) for (const p of gift.positions) given[p] = 1;
    return Array.from(own).filter((_, p) => given[p] === 0);
  });
  plan.forEach((gifts, giver) => {
    for (const gift of gifts) {
      from[gift.to]!.push(giver);
      for (const p of gift.positions) kept[gift.to]!.push(indices[giver]![p]!);
    }
  });
  return { indices: kept.map((list) => Int32Array.from(list)), from };
}

/** The state a path of events leads to from `initial`. */
function replayState(initial: TurnState, path: readonly LabelledEvent[]): TurnState {
  let state = initial;
  for (const entry of path) state = coreStep(state, entry.event)[0];
  return state;
}

/**
 * The events from the start to node `index` of the last level in `levels` (-1: the start itself),
 * rebuilt by replaying the alphabet and `step`.
 */
function replayPath(
  initial: TurnState,
  levels: readonly Level[],
  index: number,
  run: StepFunction,
  alphabet: (state: TurnState) => readonly LabelledEvent[],
): LabelledEvent[] {
  const path: LabelledEvent[] = [];
  let state = initial;
  for (const choice of choicesTo(levels, index)) {
    const entry = alphabet(state)[choice];
    if (entry === undefined) break;
    path.push(entry);
    try {
      state = run(state, entry.event)[0];
    } catch {
      break;
    }
  }
  return path;
}

/** `stopped:completed`, `failed:incomplete_batch`, `cancelled`. */
export function outcomeLabel(state: TurnState): string {
  const outcome = state.outcome;
  if (outcome === null) return state.status;
  if (outcome.status === 'stopped') return `stopped:${outcome.stopReason}`;
  if (outcome.status === 'failed') return `failed:${outcome.error.kind}`;
  return 'cancelled';
}
