// `exploreTurn` on worker threads. Each worker expands its part of the frontier and runs the
// checks of every edge out of it; the successor states stay with the worker that made them (the
// finder). Whether a successor is a new node is decided by the owner of its fingerprint (the low
// bits of the state's fingerprint, so every node of one state has one owner), which keeps the
// fingerprint tables of the states it owns: the finder sends it only the edge's rank and the
// fingerprints (20 bytes, in a transferred typed array), and the owner answers with the positions
// it accepted. No state crosses between threads. The exploration stays level by level (breadth
// first), and every choice the single-thread run makes by arrival order is made here by the
// edge's rank (the parent's index in its level, then the event's index in the parent's alphabet),
// which is that order: the node a state first reached by, the edge that runs a new state's own
// checks, the order of the nodes of a level and of the violations. So the counts, the violations
// and their (shortest) paths are the single-thread run's. `step` and the alphabet are core's and
// `alphabet.ts`'s, which each worker imports itself; the options that cross are plain data.
//
// A level is three commands: `expand` (step and check every edge, offer the successors to their
// owners), `accept` (each owner decides, in rank order, which offers are new nodes and new
// states), `keep` (each finder keeps its accepted successors as its next frontier and runs the
// checks of each new state). Since a successor stays with its finder, the worker holding the start
// state would find every state after it: before a level, when one worker's frontier is more than
// an eighth over its share (`balancePlan`), a fourth command, `give`, hands the surplus nodes
// (state and monitor, structured clones) to the workers under their share; a worker then expands
// its own and the handed nodes in rank order. Once the shares are even they stay about even (a
// few thousand nodes: 3,135 of 128,724 in maxIterations 3 on two workers), so few states cross. Without it two
// workers took as long as one: one expanded everything, the other only answered offers. Before, successors crossed to their owner as JSON text and were parsed
// back there: two workers took 1.45 to 1.8 times the CPU time of one thread (docs/benchmarks.md).
//
// The caller stays synchronous: it waits on a shared counter (`Atomics.wait`) and takes the
// workers' replies with `receiveMessageOnPort`.

import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { createTurn, isTerminal, step as coreStep, type TurnLimitsInput, type TurnState } from '@turnkit/core';
import { errorMessage } from '@turnkit/core/internal';
import { labelledEventsFor } from './alphabet.js';
import { HEAP_LOOK_EVERY, heapNearLimit } from './heap.js';
import { Fingerprint, FingerprintSet, parseSampled, sampled, ValueFingerprint } from './fingerprint.js';
import {
  initialMonitor,
  StepChecker,
  stateInvariantProblems,
  textParseProblem,
  type InvariantNumber,
  type MonitorState,
  type TraceStep,
} from './invariants.js';

/** The plain data a worker starts with. */
export interface WorkerSetup {
  readonly limits: TurnLimitsInput;
  readonly puritySample: number;
  readonly maxViolations: number;
  readonly id: number;
  readonly count: number;
  /** peers[j]: the port to worker j (none for the worker itself). */
  readonly peers: ReadonlyArray<MessagePort | null>;
  readonly control: MessagePort;
  readonly signal: SharedArrayBuffer;
}

/** A violation found by a worker, placed in the single-thread run's order by (rank, sub, seq). */
export interface RankedViolation {
  readonly invariant: InvariantNumber;
  readonly message: string;
  /** The rank of the edge (parent index × 256 + event index), or -1 for the start. */
  readonly rank: number;
  /** 0: the edge's own checks (in `seq` order), 1: the new state's checks. */
  readonly sub: number;
  readonly seq: number;
  /** True when the path ends at the edge's parent (the violation is on the start state). */
  readonly atStart?: boolean;
}

type Command =
  | { readonly kind: 'start' }
  | { readonly kind: 'give'; readonly gifts: readonly Gift[] }
  | { readonly kind: 'expand'; readonly depth: number; readonly indices: Int32Array; readonly from: readonly number[] }
  | { readonly kind: 'accept' }
  | { readonly kind: 'keep' }
  | { readonly kind: 'stop' };

/** Frontier nodes a worker hands to another: their positions in its frontier, ascending. */
export interface Gift {
  readonly to: number;
  readonly positions: Int32Array;
}

/**
 * Which frontier nodes to move between workers before a level is expanded, given each worker's
 * frontier size: per worker, the gifts it hands out (none when every worker holds at most an
 * eighth more than its share, plus 8 nodes). A successor stays with the worker that found it, so
 * without this one worker would expand every level from the start state on; with it, each
 * worker expands its share and few nodes cross again once the shares are even. A giver's nodes are
 * taken evenly spread over its frontier.
 */
export function balancePlan(sizes: readonly number[]): Gift[][] {
  const n = sizes.length;
  const total = sizes.reduce((sum, size) => sum + size, 0);
  const plan: Gift[][] = sizes.map(() => []);
  const share = (w: number): number => Math.floor(total / n) + (w < total % n ? 1 : 0);
  if (!sizes.some((size) => size > (total / n) * 1.125 + 8)) return plan;
  const deficits = sizes.map((size, w) => Math.max(0, share(w) - size));
  for (let giver = 0; giver < n; giver++) {
    const size = sizes[giver]!;
    const surplus = size - share(giver);
    if (surplus <= 0) continue;
    // `surplus` positions spread evenly over the giver's frontier, ascending.
    const positions = Int32Array.from({ length: surplus }, (_, i) => Math.floor(((2 * i + 1) * size) / (2 * surplus)));
    let from = 0;
    for (let to = 0; to < n && from < surplus; to++) {
      const count = Math.min(deficits[to]!, surplus - from);
      if (count <= 0) continue;
      deficits[to] = deficits[to]! - count;
      plan[giver]!.push({ to, positions: positions.slice(from, from + count) });
      from += count;
    }
  }
  return plan;
}

/** A node waiting in a frontier: its state and the state's fingerprint, its monitor and the monitor's fingerprint. */
export interface FrontierNode {
  readonly state: TurnState;
  readonly stateHi: number;
  readonly stateLo: number;
  readonly monitor: MonitorState;
  readonly monitorHi: number;
  readonly monitorLo: number;
}

/** A frontier node as it crosses to another worker (structured clone). */
type Handed = FrontierNode;

/** A worker's answer to a command. */
export interface Reply {
  readonly error?: string;
  readonly transitions?: number;
  readonly violations?: readonly RankedViolation[];
  readonly violationCount?: number;
  /** The ranks of the nodes kept in this level that are to be expanded, ascending. */
  readonly ranks?: Float64Array;
  readonly states?: number;
  readonly nodes?: number;
  /** Bytes of the worker's fingerprint tables. */
  readonly tableBytes?: number;
  readonly terminalOutcomes?: Readonly<Record<string, number>>;
  /** True when the worker stopped expanding part way because its heap was near its limit. */
  readonly heapFull?: boolean;
}

/** An offer's fields in the typed array sent to its owner: position in the finder's pending list, rank, state and monitor fingerprints. */
const OFFER = 6;
/** The largest rank an offer can carry (an Int32): levels of up to 8,388,607 nodes. */
const MAX_RANK = 0x7fffffff;

/** Fields of a pending successor in `PendingList`'s numbers: rank, state and monitor fingerprints, expanded (1) or not. */
const PENDING = 6;

/**
 * The successors a finder holds until their owners have answered, in rank order: their states
 * and monitors in two lists, their numbers in one growable typed array. An object for each (its
 * four fingerprint halves each a boxed number) lived until the level's end, and the young
 * generation's collector copied it. Two workers on maxIterations 4 (purity on 1 node in 16),
 * alternated at load average 2.3 to 2.8: 19.4 and 18.1 s of CPU with the objects, 18.0, 18.9 and
 * 17.9 s without (the workers' threads 14.2 and 13.2 s against 13.3, 13.9 and 13.4): a small gain
 * within the machine's noise.
 */
class PendingList {
  readonly states: TurnState[] = [];
  readonly monitors: MonitorState[] = [];
  ints = new Int32Array(PENDING * 1024);

  get length(): number {
    return this.states.length;
  }

  push(
    state: TurnState,
    monitor: MonitorState,
    rank: number,
    stateHi: number,
    stateLo: number,
    monitorHi: number,
    monitorLo: number,
    expand: boolean,
  ): void {
    const at = this.states.length * PENDING;
    if (at + PENDING > this.ints.length) {
      const grown = new Int32Array(this.ints.length * 2);
      grown.set(this.ints);
      this.ints = grown;
    }
    const ints = this.ints;
    ints[at] = rank;
    ints[at + 1] = stateHi;
    ints[at + 2] = stateLo;
    ints[at + 3] = monitorHi;
    ints[at + 4] = monitorLo;
    ints[at + 5] = expand ? 1 : 0;
    this.states.push(state);
    this.monitors.push(monitor);
  }

  clear(): void {
    this.states.length = 0;
    this.monitors.length = 0;
  }
}

interface Open extends FrontierNode {
  index: number;
}

/** Growable Int32 list, sent as its filled part. */
class Ints {
  #data: Int32Array<ArrayBuffer> = new Int32Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.#data.length) {
      const grown = new Int32Array(this.#data.length * 2);
      grown.set(this.#data);
      this.#data = grown;
    }
    this.#data[this.length++] = value;
  }
  /** A copy of the filled part (its buffer can be transferred). */
  take(): Int32Array<ArrayBuffer> {
    const out = this.#data.slice(0, this.length);
    this.length = 0;
    return out;
  }
}

/** Runs in a worker thread: answers the caller's commands until `stop`. */
export function runExploreWorker(setup: WorkerSetup): void {
  const worker = new ExploreWorker(setup);
  setup.control.on('message', (command: Command) => worker.command(command));
}

/** An event of the alphabet, as `step` takes it. */
type AlphabetEvent = ReturnType<typeof labelledEventsFor>[number]['event'];

/** One worker's share of an exploration: the nodes and states it owns, its frontier, its offers. */
class ExploreWorker {
  private readonly id: number;
  private readonly count: number;
  private readonly peers: WorkerSetup['peers'];
  private readonly control: WorkerSetup['control'];
  private readonly maxViolations: number;
  private readonly puritySample: number;
  private readonly signal: Int32Array;
  private readonly initial: TurnState;
  private readonly limits: TurnState['limits'];
  private readonly pure = { purity: true, parseStates: false, stateInvariants: false, step: coreStep } as const;
  private readonly sampledOut = { purity: false, parseStates: false, stateInvariants: false, step: coreStep } as const;
  /** The nodes and states this worker owns, by fingerprint. */
  private readonly nodes = new FingerprintSet();
  private readonly states = new FingerprintSet();
  /** The nodes this worker has offered to an owner (itself included), by fingerprint. */
  private readonly offered = new FingerprintSet();
  private readonly fp = new Fingerprint();
  // Core's step shares what it does not change: the fingerprints of shared fields are reused.
  private readonly hash = new ValueFingerprint({ reuse: true });
  /** The monitors' own, so that the two do not take each other's reused fields. */
  private readonly monitorHash = new ValueFingerprint({ reuse: true });
  private readonly checker = new StepChecker();
  private frontier: Open[] = [];
  private readonly pending = new PendingList();
  private readonly outboxes: Ints[];
  /** The offers this worker made to itself, kept for `accept`. */
  private ownOffers = new Int32Array();
  /** This worker's answers to its own offers, kept for `keep`. */
  private ownAnswers = new Int32Array();
  private terminalOutcomes: Record<string, number> = {};
  private violations: RankedViolation[] = [];
  private violationCount = 0;

  constructor(setup: WorkerSetup) {
    this.id = setup.id;
    this.count = setup.count;
    this.peers = setup.peers;
    this.control = setup.control;
    this.maxViolations = setup.maxViolations;
    this.puritySample = setup.puritySample;
    this.signal = new Int32Array(setup.signal);
    this.initial = createTurn({ id: 'turn-1', limits: setup.limits });
    this.limits = this.initial.limits;
    this.outboxes = Array.from({ length: this.count }, () => new Ints());
  }

  /** Answers one command of the caller (a failure is answered as a failed command). */
  command(command: Command): void {
    try {
      if (command.kind === 'stop') {
        this.control.close();
        for (const p of this.peers) p?.close();
        return;
      }
      if (command.kind === 'start') {
        this.answer(this.levelReply({ ranks: this.start() }));
        return;
      }
      if (command.kind === 'give') {
        this.give(command.gifts);
        this.answer({});
        return;
      }
      if (command.kind === 'expand') {
        this.take(command.from);
        this.frontier.forEach((node, i) => {
          node.index = command.indices[i]!;
        });
        // Handed nodes come after the worker's own: the edges must be taken in rank order.
        if (command.from.length > 0) this.frontier.sort((a, b) => a.index - b.index);
        const { transitions, heapFull } = this.expand(command.depth);
        this.answer(this.levelReply(heapFull ? { transitions, heapFull } : { transitions }));
        return;
      }
      if (command.kind === 'accept') {
        this.accept();
        this.answer(this.levelReply({}));
        return;
      }
      this.answer(this.levelReply({ ranks: this.keep() }));
    } catch (error) {
      this.answer({ error: errorMessage(error) });
    }
  }

  private answer(reply: Reply): void {
    this.control.postMessage(reply);
    Atomics.add(this.signal, 0, 1);
    Atomics.notify(this.signal, 0);
  }

  private report(v: RankedViolation): void {
    this.violationCount += 1;
    if (this.violations.length < this.maxViolations) this.violations.push(v);
  }

  private owner(stateLo: number): number {
    return (stateLo >>> 0) % this.count;
  }

  /** The start state, kept by its owner: the ranks of the first frontier (none elsewhere). */
  private start(): Float64Array {
    const { initial, hash, fp } = this;
    const monitor = initialMonitor(initial);
    const [mHi, mLo] = [this.monitorHash.value(monitor).hi, this.monitorHash.value(monitor).lo];
    hash.value(initial);
    if (this.owner(hash.lo) !== this.id) return new Float64Array();
    fp.pair(hash.hi, hash.lo, mHi, mLo);
    this.nodes.add(fp.hi, fp.lo);
    this.states.add(hash.hi, hash.lo);
    this.newState(initial, hash.hi, -1);
    this.frontier = [{ index: -1, state: initial, stateHi: hash.hi, stateLo: hash.lo, monitor, monitorHi: mHi, monitorLo: mLo }];
    return Float64Array.of(-1);
  }

  /** A new state's own checks (invariant 3) and its outcome, on the edge of `rank` that first reached it. */
  private newState(state: TurnState, stateHi: number, rank: number): void {
    if (isTerminal(state)) {
      const label = outcomeLabel(state);
      this.terminalOutcomes[label] = (this.terminalOutcomes[label] ?? 0) + 1;
    }
    const name = rank < 0 ? 'state' : 'state after';
    const atStart = rank < 0 ? { atStart: true } : {};
    let seq = 0;
    for (const problem of stateInvariantProblems(state, name))
      this.report({ invariant: 3, message: problem, rank, sub: 1, seq: seq++, ...atStart });
    const problem = parseSampled(stateHi, this.puritySample) ? textParseProblem(JSON.stringify(state)) : undefined;
    if (problem !== undefined) this.report({ invariant: 3, message: problem, rank, sub: 1, seq: seq++, ...atStart });
  }

  /** Hands the frontier nodes at the gifts' positions to their workers; keeps the others in order. */
  private give(gifts: readonly Gift[]): void {
    const given = new Uint8Array(this.frontier.length);
    for (const gift of gifts) {
      const nodes: Handed[] = [];
      for (const p of gift.positions) {
        const node = this.frontier[p]!;
        given[p] = 1;
        nodes.push({
          state: node.state,
          stateHi: node.stateHi,
          stateLo: node.stateLo,
          monitor: node.monitor,
          monitorHi: node.monitorHi,
          monitorLo: node.monitorLo,
        });
      }
      this.peers[gift.to]!.postMessage(nodes);
    }
    this.frontier = this.frontier.filter((_, p) => given[p] === 0);
  }

  /** Appends the nodes handed by the workers `from`, in that order. */
  private take(from: readonly number[]): void {
    for (const j of from) {
      const got = receiveMessageOnPort(this.peers[j]!);
      if (got === undefined) throw new Error(`worker ${this.id}: no frontier nodes from worker ${j}`);
      for (const node of got.message as Handed[]) this.frontier.push({ index: -1, ...node });
    }
  }

  /**
   * Steps and checks every edge out of this worker's frontier; offers each successor to its owner.
   * Stops part way (`heapFull`) when its heap nears its limit.
   */
  private expand(depth: number): { transitions: number; heapFull: boolean } {
    let transitions = 0;
    let heapFull = false;
    this.pending.clear();
    for (let n = 0; n < this.frontier.length; n++) {
      if (n % HEAP_LOOK_EVERY === HEAP_LOOK_EVERY - 1 && heapNearLimit()) {
        heapFull = true;
        break;
      }
      const node = this.frontier[n]!;
      const entries = labelledEventsFor(node.state);
      if (entries.length > 256) throw new RangeError(`the alphabet gave ${entries.length} events for one state; at most 256.`);
      if (node.index * 256 + 255 > MAX_RANK) throw new RangeError('a level of more than 8,388,607 nodes');
      const checks = sampled(node.index, depth, this.puritySample) ? this.pure : this.sampledOut;
      for (let e = 0; e < entries.length; e++) {
        transitions += 1;
        this.edge(node, entries[e]!.event, node.index * 256 + e, depth, checks);
      }
    }
    for (let j = 0; j < this.count; j++) {
      const offers = this.outboxes[j]!.take();
      if (j === this.id) this.ownOffers = offers;
      else this.peers[j]!.postMessage(offers, [offers.buffer]);
    }
    return { transitions, heapFull };
  }

  /** One edge out of `node`: stepped, checked, and its successor offered to its owner unless seen. */
  private edge(
    node: Open,
    event: AlphabetEvent,
    rank: number,
    depth: number,
    checks: typeof this.pure | typeof this.sampledOut,
  ): void {
    const { state, monitor, monitorHi, monitorLo } = node;
    let record: TraceStep;
    try {
      const [after, effects] = coreStep(state, event);
      record = { state, event, next: after, effects };
    } catch (error) {
      record = { state, event, next: state, effects: [], thrown: errorMessage(error) };
    }
    const checker = this.checker;
    const nextMonitor = checker.check(this.limits, record, depth, monitor, checks);
    if (checker.violations.length > 0) {
      for (let seq = 0; seq < checker.violations.length; seq++) {
        const v = checker.violations[seq]!;
        this.report({ invariant: v.invariant, message: v.message, rank, sub: 0, seq });
      }
      checker.violations.length = 0;
    }
    if (record.thrown !== undefined) return;
    let mHi = monitorHi;
    let mLo = monitorLo;
    if (nextMonitor !== monitor) {
      this.monitorHash.value(nextMonitor);
      mHi = this.monitorHash.hi;
      mLo = this.monitorHash.lo;
    }
    // The state given back as it was (a terminal state absorbing an event) has its fingerprint:
    // with its monitor unchanged too it is its own parent, already a node.
    let stateHi = node.stateHi;
    let stateLo = node.stateLo;
    if (record.next !== state) {
      this.hash.value(record.next);
      stateHi = this.hash.hi;
      stateLo = this.hash.lo;
    } else if (nextMonitor === monitor) return;
    const to = this.owner(stateLo);
    // A node this worker has offered before (its edges are ranked in order, and earlier levels
    // come first) or already holds can be dropped here: its owner keeps the first offer.
    this.fp.pair(stateHi, stateLo, mHi, mLo);
    if ((to === this.id && this.nodes.has(this.fp.hi, this.fp.lo)) || !this.offered.add(this.fp.hi, this.fp.lo)) return;
    const box = this.outboxes[to]!;
    box.push(this.pending.length);
    box.push(rank);
    box.push(stateHi | 0);
    box.push(stateLo | 0);
    box.push(mHi | 0);
    box.push(mLo | 0);
    this.pending.push(record.next, nextMonitor, rank, stateHi, stateLo, mHi, mLo, !(isTerminal(state) && record.next === state));
  }

  /** The messages of every other worker on its port, in worker order, this worker's own in its place. */
  private receiveAll(own: Int32Array, what: string): Int32Array[] {
    const all: Int32Array[] = [];
    for (let j = 0; j < this.count; j++) {
      if (j === this.id) all.push(own);
      else {
        const got = receiveMessageOnPort(this.peers[j]!);
        if (got === undefined) throw new Error(`worker ${this.id}: no ${what} from worker ${j}`);
        all.push(got.message as Int32Array);
      }
    }
    return all;
  }

  /**
   * As owner: the offers of every finder, in rank order (a finder's are in its rank order, and
   * the ranks of two finders never tie); each finder is answered with the positions of its offers
   * that are new nodes, each tagged when its state is new too (position × 2 + 1).
   */
  private accept(): void {
    const all = this.receiveAll(this.ownOffers, 'offers');
    const answers: Ints[] = Array.from({ length: this.count }, () => new Ints());
    const heads = new Array<number>(this.count).fill(0);
    for (;;) {
      let best = -1;
      for (let j = 0; j < this.count; j++)
        if (heads[j]! < all[j]!.length && (best < 0 || all[j]![heads[j]! + 1]! < all[best]![heads[best]! + 1]!)) best = j;
      if (best < 0) break;
      const o = heads[best]!;
      heads[best] = o + OFFER;
      const offers = all[best]!;
      const stateHi = offers[o + 2]!;
      const stateLo = offers[o + 3]!;
      this.fp.pair(stateHi >>> 0, stateLo >>> 0, offers[o + 4]! >>> 0, offers[o + 5]! >>> 0);
      if (!this.nodes.add(this.fp.hi, this.fp.lo)) continue;
      answers[best]!.push(offers[o]! * 2 + (this.states.add(stateHi, stateLo) ? 1 : 0));
    }
    for (let j = 0; j < this.count; j++) {
      const list = answers[j]!.take();
      if (j === this.id) this.ownAnswers = list;
      else this.peers[j]!.postMessage(list, [list.buffer]);
    }
  }

  /** As finder: keeps the successors their owners accepted, in rank order, and checks the new states. */
  private keep(): Float64Array {
    const accepted: number[] = [];
    for (const list of this.receiveAll(this.ownAnswers, 'answers')) for (const a of list) accepted.push(a);
    // Positions in `pending` are in rank order.
    accepted.sort((a, b) => a - b);
    const next: Open[] = [];
    const ranks: number[] = [];
    const { states, monitors, ints } = this.pending;
    for (const a of accepted) {
      const p = a >> 1;
      const at = p * PENDING;
      const rank = ints[at]!;
      if ((a & 1) === 1) this.newState(states[p]!, ints[at + 1]!, rank);
      if (ints[at + 5] === 0) continue;
      next.push({
        index: -1,
        state: states[p]!,
        stateHi: ints[at + 1]!,
        stateLo: ints[at + 2]!,
        monitor: monitors[p]!,
        monitorHi: ints[at + 3]!,
        monitorLo: ints[at + 4]!,
      });
      ranks.push(rank);
    }
    this.pending.clear();
    this.frontier = next;
    return Float64Array.from(ranks);
  }

  private levelReply(extra: Reply): Reply {
    const reply: Reply = {
      ...extra,
      violations: this.violations,
      violationCount: this.violationCount,
      states: this.states.size,
      nodes: this.nodes.size,
      tableBytes: this.nodes.bytes + this.states.bytes + this.offered.bytes,
      terminalOutcomes: this.terminalOutcomes,
    };
    this.violations = [];
    this.violationCount = 0;
    this.terminalOutcomes = {};
    return reply;
  }
}

/** `stopped:completed`, `failed:incomplete_batch`, `cancelled`. */
export function outcomeLabel(state: TurnState): string {
  const outcome = state.outcome;
  if (outcome === null) return state.status;
  if (outcome.status === 'stopped') return `stopped:${outcome.stopReason}`;
  if (outcome.status === 'failed') return `failed:${outcome.error.kind}`;
  return 'cancelled';
}

/**
 * A worker's first code: imports this module (through tsx from the sources) and runs
 * `runExploreWorker`; a failure to load is answered as a failed command, so the caller, which
 * waits without an event loop, hears of it.
 */
const BOOT = `
const { workerData } = require('node:worker_threads');
(async () => {
  const { setup, module, tsx } = workerData;
  try {
    const loaded = tsx === null ? await import(module) : await (await import(tsx)).tsImport(module, module);
    loaded.runExploreWorker(setup);
  } catch (error) {
    setup.control.postMessage({ error: 'loading the worker failed: ' + String(error && error.stack || error) });
    const signal = new Int32Array(setup.signal);
    Atomics.add(signal, 0, 1);
    Atomics.notify(signal, 0);
  }
})();
`;

/**
 * The worker threads' Node options: the process's, without what makes it run code of its own
 * (`-e`, `-p` and their code; `--input-type`, which would read the worker's CommonJS boot code as a
 * module) and without `--expose-gc`, which a worker refuses, and with the sources' condition when the caller runs from them.
 */
export function workerArgv(source: boolean, argv: readonly string[] = process.execArgv): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-e' || arg === '--eval' || arg === '-p' || arg === '--print') i += 1;
    // V8's --expose-gc holds for the whole process already, and a worker refuses it (the check bench runs with it).
    else if (!/^(?:--eval=|--print=|--input-type|--expose[-_]gc$)/.test(arg)) out.push(arg);
  }
  if (source && !out.includes('--conditions=@turnkit/source')) out.push('--conditions=@turnkit/source');
  return out;
}

/** The caller's side: `count` workers, commands to all of them, and their replies in worker order. */
export class ExploreWorkers {
  readonly #workers: Worker[] = [];
  readonly #controls: MessagePort[] = [];
  readonly #signal = new SharedArrayBuffer(4);
  readonly #counter = new Int32Array(this.#signal);

  constructor(options: { limits: TurnLimitsInput; puritySample: number; maxViolations: number; count: number }) {
    const { count } = options;
    const ports: Array<Array<MessagePort | null>> = Array.from({ length: count }, () =>
      Array.from({ length: count }, () => null),
    );
    for (let i = 0; i < count; i++)
      for (let j = i + 1; j < count; j++) {
        const channel = new MessageChannel();
        ports[i]![j] = channel.port1;
        ports[j]![i] = channel.port2;
      }
    // From the sources (tests, tsx) a worker loads them through tsx, as the caller does.
    const source = import.meta.url.endsWith('.ts');
    const tsx = source
      ? new URL('dist/esm/api/index.mjs', pathToFileURL(createRequire(import.meta.url).resolve('tsx/package.json'))).href
      : null;
    for (let id = 0; id < count; id++) {
      const control = new MessageChannel();
      this.#controls.push(control.port1);
      const peers = ports[id]!;
      const setup: WorkerSetup = {
        limits: options.limits,
        puritySample: options.puritySample,
        maxViolations: options.maxViolations,
        id,
        count,
        peers,
        control: control.port2,
        signal: this.#signal,
      };
      const worker = new Worker(BOOT, {
        eval: true,
        workerData: { setup, module: import.meta.url, tsx },
        transferList: [control.port2, ...peers.filter((p): p is MessagePort => p !== null)],
        execArgv: workerArgv(source),
      });
      worker.unref();
      this.#workers.push(worker);
    }
  }

  get count(): number {
    return this.#workers.length;
  }

  /** Sends a command to every worker (each its own) and waits for every reply. */
  command(commands: (id: number) => Command): Reply[] {
    const expected = Atomics.load(this.#counter, 0) + this.#workers.length;
    this.#controls.forEach((port, id) => {
      port.postMessage(commands(id));
    });
    for (;;) {
      const now = Atomics.load(this.#counter, 0);
      if (now >= expected) break;
      if (Atomics.wait(this.#counter, 0, now, 120_000) === 'timed-out' && Atomics.load(this.#counter, 0) === now)
        throw new Error('exploreTurn: a worker thread did not answer in two minutes');
    }
    const replies = this.#controls.map((port, id) => {
      const got = receiveMessageOnPort(port);
      if (got === undefined) throw new Error(`exploreTurn: worker ${id} signalled without a reply`);
      return got.message as Reply;
    });
    const failed = replies.find((r) => r.error !== undefined);
    if (failed !== undefined) throw new Error(`exploreTurn: a worker failed: ${failed.error}`);
    return replies;
  }

  /** Stops the workers. */
  close(): void {
    for (const port of this.#controls) {
      port.postMessage({ kind: 'stop' } satisfies Command);
      port.close();
    }
    for (const worker of this.#workers) void worker.terminate();
  }
}
