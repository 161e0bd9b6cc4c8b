// Exhaustive breadth-first exploration of the real reducer over the finite alphabet of
// `alphabet.ts`, checking the invariants on every edge. Nodes are keyed by the turn state plus the
// invariant monitor, so the history invariants stay sound even when a (buggy) reducer reaches one
// state along two histories; `states` counts distinct turn states. Keys are SHA-1 digests of the
// JSON texts (28 characters instead of kilobytes per stored node). The purity re-runs of
// invariants 2 and 3 run on one edge in `puritySample`; the checks that depend on a state alone
// (core's state invariants and parseTurnState, invariant 3) run once per distinct state, on the
// first edge that reaches it.

import { hash } from 'node:crypto';
import { createTurn, isTerminal, step as coreStep } from '@turnkit/core';
import { errorMessage } from '@turnkit/core/internal';
import type { TurnLimitsInput, TurnState } from '@turnkit/core';
import { labelledEventsFor, type LabelledEvent } from './alphabet.js';
import {
  checkStep,
  initialMonitor,
  parseProblem,
  stateInvariantProblems,
  stateJson,
  type InvariantNumber,
  type MonitorState,
} from './invariants.js';
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
   * state, invariant 3) run on one edge in this many (default 1: every edge). Every other check
   * runs on every edge, and parseTurnState on every distinct state.
   */
  readonly puritySample?: number;
  /**
   * Stop at the end of the depth level where the first violation was found (default false: explore
   * everything). The violations found are still the shortest ones; the result is then not exhaustive.
   */
  readonly stopAtViolation?: boolean;
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
  /** How long the exploration took, in ms. */
  readonly ms: number;
}

interface Node {
  /** Null once the node is expanded: only the path back to the start is kept. */
  state: TurnState | null;
  monitor: MonitorState | null;
  readonly parent: Node | null;
  readonly via: LabelledEvent | null;
}

/** A short key for a text: its SHA-1 digest (base64). */
export const digest = (text: string): string => hash('sha1', text, 'base64');

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
  const maxViolations = options.maxViolations ?? 50;
  const puritySample = options.puritySample ?? 1;
  if (!Number.isInteger(puritySample) || puritySample < 1)
    throw new TypeError(`exploreTurn: puritySample must be a whole number ≥ 1, got ${String(options.puritySample)}.`);
  const initial = createTurn({ id: 'turn-1', limits: options.limits });
  const limits = initial.limits;

  const seenNodes = new Set<string>();
  const seenStates = new Set<string>();
  const terminalOutcomes: Record<string, number> = {};
  const violations: ExploreViolation[] = [];
  let violationCount = 0;
  let transitions = 0;

  const report = (node: Node, entry: LabelledEvent | null, invariant: InvariantNumber, message: string): void => {
    violationCount += 1;
    if (violations.length >= maxViolations) return;
    const path = pathTo(node);
    if (entry !== null) path.push(entry);
    violations.push({ invariant, message, path: path.map((e) => e.label), events: path.map((e) => e.event) });
  };

  /** True when the node is new; a new distinct state is counted and checked alone (invariant 3). */
  const visit = (state: TurnState, monitor: MonitorState, at: Node, entry: LabelledEvent | null): boolean => {
    const stateKey = digest(stateJson(state));
    const nodeKey = `${stateKey}${digest(JSON.stringify(monitor))}`;
    if (seenNodes.has(nodeKey)) return false;
    seenNodes.add(nodeKey);
    if (!seenStates.has(stateKey)) {
      seenStates.add(stateKey);
      if (isTerminal(state)) terminalOutcomes[outcomeLabel(state)] = (terminalOutcomes[outcomeLabel(state)] ?? 0) + 1;
      for (const problem of stateInvariantProblems(state, entry === null ? 'state' : 'state after'))
        report(at, entry, 3, problem);
      const problem = parseProblem(state);
      if (problem !== undefined) report(at, entry, 3, problem);
    }
    return true;
  };

  const start: Node = { state: initial, monitor: initialMonitor(initial), parent: null, via: null };
  let frontier: Node[] = [start];
  visit(initial, start.monitor!, start, null);
  let depth = 0;
  while (frontier.length > 0 && depth < options.maxDepth) {
    const next: Node[] = [];
    for (const node of frontier) {
      const state = node.state!;
      const monitor = node.monitor!;
      for (const entry of alphabet(state)) {
        transitions += 1;
        let record;
        try {
          const [after, effects] = run(state, entry.event);
          record = { state, event: entry.event, next: after, effects };
        } catch (error) {
          record = { state, event: entry.event, next: state, effects: [], thrown: errorMessage(error) };
        }
        const checked = checkStep(limits, record, depth, monitor, {
          step: run,
          purity: transitions % puritySample === 0,
          parseStates: false,
          stateInvariants: false,
        });
        violationCount += checked.violations.length;
        for (const v of checked.violations) {
          if (violations.length >= maxViolations) break;
          const path = pathTo(node);
          violations.push({
            invariant: v.invariant,
            message: v.message,
            path: [...path.map((e) => e.label), entry.label],
            events: [...path.map((e) => e.event), entry.event],
          });
        }
        if (record.thrown !== undefined) continue;
        // A terminal state is checked (absorption) but not expanded further than once.
        if (visit(record.next, checked.monitor, node, entry) && !(isTerminal(state) && record.next === state)) {
          next.push({ state: record.next, monitor: checked.monitor, parent: node, via: entry });
        }
      }
      node.state = null;
      node.monitor = null;
    }
    frontier = next;
    depth += 1;
    options.onProgress?.({ states: seenStates.size, frontier: frontier.length, depth });
    if (options.stopAtViolation === true && violationCount > 0) break;
  }

  return {
    states: seenStates.size,
    nodes: seenNodes.size,
    transitions,
    terminalOutcomes,
    violations,
    violationCount,
    depth,
    exhaustive: frontier.length === 0,
    ms: Math.round(performance.now() - started),
  };
}

function pathTo(node: Node): LabelledEvent[] {
  const path: LabelledEvent[] = [];
  for (let n: Node | null = node; n !== null && n.via !== null; n = n.parent) path.push(n.via);
  return path.reverse();
}

/** `stopped:completed`, `failed:incomplete_batch`, `cancelled`. */
export function outcomeLabel(state: TurnState): string {
  const outcome = state.outcome;
  if (outcome === null) return state.status;
  if (outcome.status === 'stopped') return `stopped:${outcome.stopReason}`;
  if (outcome.status === 'failed') return `failed:${outcome.error.kind}`;
  return 'cancelled';
}
