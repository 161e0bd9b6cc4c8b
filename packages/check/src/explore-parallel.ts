// `exploreTurn` on worker threads. Each worker owns the states whose fingerprint falls to it (the
// low bits of the state's fingerprint, so every node of one state has one owner), keeps their
// fingerprint tables, expands its own frontier and runs the checks of every edge out of it. A
// successor owned by another worker crosses as its JSON text (already made for its fingerprint)
// with its monitor's. The exploration stays level by level (breadth first), and every choice the
// single-thread run makes by arrival order is made here by the edge's rank (the parent's index in
// its level, then the event's index in the parent's alphabet), which is that order: the node a
// state first reached by, the edge that runs a new state's own checks, the order of the nodes of a
// level and of the violations. So the counts, the violations and their (shortest) paths are the
// single-thread run's. `step` and the alphabet are core's and `alphabet.ts`'s, which each worker
// imports itself; the options that cross are plain data.
//
// The caller stays synchronous: it waits on a shared counter (`Atomics.wait`) and takes the
// workers' replies with `receiveMessageOnPort`.

import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { createTurn, isTerminal, step as coreStep, type TurnLimitsInput, type TurnState } from '@turnkit/core';
import { errorMessage } from '@turnkit/core/internal';
import { labelledEventsFor } from './alphabet.js';
import { Fingerprint, FingerprintSet, parseSampled, sampled } from './fingerprint.js';
import {
  checkStep,
  initialMonitor,
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
  | { readonly kind: 'expand'; readonly depth: number; readonly indices: Int32Array }
  | { readonly kind: 'accept' }
  | { readonly kind: 'stop' };

/** A worker's answer to a command. */
export interface Reply {
  readonly error?: string;
  readonly transitions?: number;
  readonly violations?: readonly RankedViolation[];
  readonly violationCount?: number;
  /** The ranks of the nodes accepted in this level that are to be expanded, ascending. */
  readonly ranks?: Float64Array;
  readonly states?: number;
  readonly nodes?: number;
  /** Bytes of the worker's fingerprint tables. */
  readonly tableBytes?: number;
  readonly terminalOutcomes?: Readonly<Record<string, number>>;
}

/** A successor crossing to its owner: rank, fingerprints, texts, and whether it is expanded. */
type Candidate = [
  rank: number,
  stateHi: number,
  stateLo: number,
  monitorHi: number,
  monitorLo: number,
  expand: boolean,
  stateText: string,
  monitorText: string,
  state: TurnState | null,
  monitor: MonitorState | null,
];

interface Open {
  index: number;
  readonly state: TurnState;
  readonly monitor: MonitorState;
  readonly monitorHi: number;
  readonly monitorLo: number;
  readonly monitorText: string;
}

/** Runs in a worker thread: answers the caller's commands until `stop`. */
export function runExploreWorker(setup: WorkerSetup): void {
  const { id, count, peers, control, maxViolations, puritySample } = setup;
  const signal = new Int32Array(setup.signal);
  const initial = createTurn({ id: 'turn-1', limits: setup.limits });
  const limits = initial.limits;
  const pure = { purity: true, parseStates: false, stateInvariants: false, step: coreStep } as const;
  const sampledOut = { purity: false, parseStates: false, stateInvariants: false, step: coreStep } as const;
  const nodes = new FingerprintSet();
  const states = new FingerprintSet();
  /** The nodes this worker has offered to an owner (itself included), by fingerprint. */
  const offered = new FingerprintSet();
  const fp = new Fingerprint();
  let frontier: Open[] = [];
  let outboxes: Candidate[][] = [];
  let terminalOutcomes: Record<string, number> = {};
  let violations: RankedViolation[] = [];
  let violationCount = 0;

  const answer = (reply: Reply): void => {
    control.postMessage(reply);
    Atomics.add(signal, 0, 1);
    Atomics.notify(signal, 0);
  };
  const report = (v: RankedViolation): void => {
    violationCount += 1;
    if (violations.length < maxViolations) violations.push(v);
  };
  const owner = (stateLo: number): number => (stateLo >>> 0) % count;

  /** Accepts the candidates of a level in rank order; returns the ranks of the nodes to expand. */
  const accept = (candidates: Candidate[]): Float64Array => {
    candidates.sort((a, b) => a[0] - b[0]);
    const next: Open[] = [];
    const ranks: number[] = [];
    for (const c of candidates) {
      const [rank, stateHi, stateLo, monitorHi, monitorLo, expand, stateText, monitorText] = c;
      fp.pair(stateHi, stateLo, monitorHi, monitorLo);
      if (!nodes.add(fp.hi, fp.lo)) continue;
      const state = c[8] ?? (JSON.parse(stateText) as TurnState);
      if (states.add(stateHi, stateLo)) {
        if (isTerminal(state)) {
          const label = outcomeLabel(state);
          terminalOutcomes[label] = (terminalOutcomes[label] ?? 0) + 1;
        }
        const name = rank < 0 ? 'state' : 'state after';
        const atStart = rank < 0 ? { atStart: true } : {};
        let seq = 0;
        for (const problem of stateInvariantProblems(state, name))
          report({ invariant: 3, message: problem, rank, sub: 1, seq: seq++, ...atStart });
        const problem = parseSampled(stateHi, puritySample) ? textParseProblem(stateText) : undefined;
        if (problem !== undefined) report({ invariant: 3, message: problem, rank, sub: 1, seq: seq++, ...atStart });
      }
      if (!expand) continue;
      const monitor = c[9] ?? (JSON.parse(monitorText) as MonitorState);
      next.push({ index: -1, state, monitor, monitorHi, monitorLo, monitorText });
      ranks.push(rank);
    }
    frontier = next;
    return Float64Array.from(ranks);
  };

  const expand = (depth: number): number => {
    let transitions = 0;
    outboxes = Array.from({ length: count }, () => []);
    for (const node of frontier) {
      const { state, monitor, monitorHi, monitorLo, monitorText } = node;
      const entries = labelledEventsFor(state);
      if (entries.length > 256) throw new RangeError(`the alphabet gave ${entries.length} events for one state; at most 256.`);
      for (let e = 0; e < entries.length; e++) {
        const entry = entries[e]!;
        const rank = node.index * 256 + e;
        transitions += 1;
        let record: TraceStep;
        try {
          const [after, effects] = coreStep(state, entry.event);
          record = { state, event: entry.event, next: after, effects };
        } catch (error) {
          record = { state, event: entry.event, next: state, effects: [], thrown: errorMessage(error) };
        }
        const checked = checkStep(limits, record, depth, monitor, sampled(node.index, depth, puritySample) ? pure : sampledOut);
        for (const [seq, v] of checked.violations.entries())
          report({ invariant: v.invariant, message: v.message, rank, sub: 0, seq });
        if (record.thrown !== undefined) continue;
        let mHi = monitorHi;
        let mLo = monitorLo;
        let mText = monitorText;
        if (checked.monitor !== monitor) {
          mText = JSON.stringify(checked.monitor);
          fp.text(mText);
          mHi = fp.hi;
          mLo = fp.lo;
        }
        const text = JSON.stringify(record.next);
        fp.text(text);
        const [stateHi, stateLo] = [fp.hi, fp.lo];
        const to = owner(stateLo);
        const local = to === id;
        // A node this worker has offered before (its edges are ranked in order, and earlier levels
        // come first) or already holds can be dropped here: its owner keeps the first offer.
        fp.pair(stateHi, stateLo, mHi, mLo);
        if ((local && nodes.has(fp.hi, fp.lo)) || !offered.add(fp.hi, fp.lo)) continue;
        const expandIt = !(isTerminal(state) && record.next === state);
        outboxes[to]!.push([
          rank,
          stateHi,
          stateLo,
          mHi,
          mLo,
          expandIt,
          text,
          mText,
          local ? record.next : null,
          local ? checked.monitor : null,
        ]);
      }
    }
    for (let j = 0; j < count; j++) if (j !== id) peers[j]!.postMessage(outboxes[j]);
    return transitions;
  };

  const levelReply = (extra: Reply): Reply => {
    const reply: Reply = {
      ...extra,
      violations,
      violationCount,
      states: states.size,
      nodes: nodes.size,
      tableBytes: nodes.bytes + states.bytes + offered.bytes,
      terminalOutcomes,
    };
    violations = [];
    violationCount = 0;
    terminalOutcomes = {};
    return reply;
  };

  control.on('message', (command: Command) => {
    try {
      if (command.kind === 'stop') {
        control.close();
        for (const p of peers) p?.close();
        return;
      }
      if (command.kind === 'start') {
        const monitor = initialMonitor(initial);
        const monitorText = JSON.stringify(monitor);
        fp.text(monitorText);
        const [mHi, mLo] = [fp.hi, fp.lo];
        const text = JSON.stringify(initial);
        fp.text(text);
        const ranks =
          owner(fp.lo) === id
            ? accept([[-1, fp.hi, fp.lo, mHi, mLo, true, text, monitorText, initial, monitor]])
            : new Float64Array();
        answer(levelReply({ ranks }));
        return;
      }
      if (command.kind === 'expand') {
        frontier.forEach((node, i) => {
          node.index = command.indices[i]!;
        });
        const transitions = expand(command.depth);
        answer(levelReply({ transitions }));
        return;
      }
      const candidates = outboxes[id]!;
      for (let j = 0; j < count; j++) {
        if (j === id) continue;
        const got = receiveMessageOnPort(peers[j]!);
        if (got === undefined) throw new Error(`worker ${id}: no candidates from worker ${j}`);
        for (const c of got.message as Candidate[]) candidates.push(c);
      }
      outboxes = [];
      answer(levelReply({ ranks: accept(candidates) }));
    } catch (error) {
      answer({ error: errorMessage(error) });
    }
  });
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
 * module), and with the sources' condition when the caller runs from them.
 */
export function workerArgv(source: boolean, argv: readonly string[] = process.execArgv): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-e' || arg === '--eval' || arg === '-p' || arg === '--print') i += 1;
    else if (!/^(?:--eval=|--print=|--input-type)/.test(arg)) out.push(arg);
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
