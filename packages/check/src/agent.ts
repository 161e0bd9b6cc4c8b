// `checkAgent`: exhaustive breadth-first exploration of one agent's turns. Core's `step` runs
// composed with the agent's dispatcher decisions (agent-rules.ts: its tools, permission sets,
// defaultDecision, needsApproval and readOnly through the real `decide`; its dispatcher budget
// through the real ledger), its limits and budgets. A node is the turn state, the trace of call
// records so far (the dispatcher's budget counters follow from it) and the invariant monitor, kept
// as a 64-bit fingerprint and a link back to the start (as exploreTurn keeps its); every edge is one
// core event, checked with the turn contract's ten invariants, the built-in agent properties and
// the user's. A broken property comes back as the shortest path (breadth-first) and, on request,
// as a vitest file that replays it against the real agent (agent-test.ts).

import { writeFileSync } from 'node:fs';
import {
  createTurn,
  dispatchOutcomeEvent,
  isTerminal,
  step as coreStep,
  undecided,
  type CallRecord,
  type Effect,
  type JsonValue,
  type ParkedCall,
  type ToolCall,
  type ToolResult,
  type TurnEvent,
  type TurnState,
} from '@turnkit/core';
import { errorMessage, layerLimits } from '@turnkit/core/internal';
import { BudgetLedger, denialNow, type BudgetUsage } from '@turnkit/dispatch/internal';
import { builtInProperties, evaluate, type AgentProperty, type AgentTrace } from './agent-properties.js';
import {
  agentRules,
  type AgentRules,
  type CallChoice,
  type HookAnswer,
  type PolicyAnswer,
  type RulesOptions,
  type SkippedInput,
} from './agent-rules.js';
import { counterexampleTest, type CounterexampleTestOptions } from './agent-test.js';
import type { AgentStep, AgentViolation } from './agent-violation.js';

export type { AgentStep, AgentViolation } from './agent-violation.js';
import type { CheckedAgent } from './agent-types.js';
import { freshCallId, replyUsage } from './alphabet.js';
import { HEAP_LOOK_EVERY, heapNearLimit } from './heap.js';
import { choicesTo, type Level } from './levels.js';
import type { StepFunction } from './logic.js';
import { Fingerprint, FingerprintSet, sampled, ValueFingerprint } from './fingerprint.js';
import {
  initialMonitor,
  StepChecker,
  stateInvariantProblems,
  textParseProblem,
  type MonitorState,
  type TraceStep,
} from './invariants.js';

/**
 * The options of `checkAgent`: the user's properties, the bounds of the exploration, and where to write a
 * counterexample test.
 */
export interface CheckAgentOptions extends RulesOptions {
  /** The user's properties, checked on every edge with the built-in ones. */
  readonly properties?: readonly AgentProperty[];
  /** Calls per model reply: every set of up to this many distinct calls is a reply. Default 2 (at most `limits.maxCallsPerReply`). */
  readonly maxCallsPerReply?: number;
  /** Stop expanding after this many events from the start (default 60; the result says if it was reached). */
  readonly maxDepth?: number;
  /** Stop once this many nodes were reached (default 2,000,000): a guard against a space too large to finish. */
  readonly maxStates?: number;
  /** Keep the first violation of at most this many properties (default 20); `violationCount` has the total. */
  readonly maxViolations?: number;
  /** Write the first violation as a vitest file (see `counterexampleTest`). */
  readonly out?: CounterexampleTestOptions & { readonly file: string };
  /**
   * Core's purity re-runs (step re-run on frozen copies and on a JSON round trip) run on the
   * edges of one node in this many, picked by a hash (default 16; 1 runs them on every edge).
   * Every other check runs on every edge, and parseTurnState on every distinct state.
   * `exploreTurn` checks core's purity on every edge of its own explorations.
   */
  readonly puritySample?: number;
  /** The reducer (default core's `step`): a test passes a broken one to see the checks catch it. */
  readonly step?: StepFunction;
  /** Hears the exploration's progress after each level (nodes reached, frontier size, depth), for a progress bar. */
  readonly onProgress?: (progress: { readonly states: number; readonly frontier: number; readonly depth: number }) => void;
}

/** What `checkAgent` found: the size of the explored space, and the violations with their paths. */
export interface CheckAgentResult {
  /** Distinct nodes reached: turn state, budget counters, call records and the invariant monitor. */
  readonly states: number;
  /** Edges taken: (node, event) pairs stepped and checked. */
  readonly transitions: number;
  /** The deepest level expanded. */
  readonly depth: number;
  /** True when every reachable node was expanded. */
  readonly exhaustive: boolean;
  /**
   * What stopped the exploration before every reachable node was expanded: `maxStates` nodes
   * were reached, `maxDepth` levels were expanded, or (`memory`) the heap reached most of the
   * size Node allows it (three quarters of `--max-old-space-size`, less on a small heap), where
   * going on would risk the process; null when it is exhaustive.
   */
  readonly cutOff: 'maxStates' | 'maxDepth' | 'memory' | null;
  /** The first (shortest) violation of each broken property, in the order found. */
  readonly violations: readonly AgentViolation[];
  /** Violations found in all (the first of each property is in `violations`). */
  readonly violationCount: number;
  /** The calls a model reply was made of. */
  readonly calls: readonly CallChoice[];
  /** Inputs the tools' schemas refused (left out). */
  readonly skipped: readonly SkippedInput[];
  /** The names of the properties checked (built-in and the user's). */
  readonly properties: readonly string[];
  /** Distinct terminal states per outcome, as `exploreTurn` counts them. */
  readonly terminalOutcomes: Readonly<Record<string, number>>;
  /** How long the check took, in ms. */
  readonly ms: number;
}

interface World {
  readonly turn: TurnState;
  readonly usage: BudgetUsage;
  readonly trace: AgentTrace;
  /** The calls of the blocking effect the turn waits on (`dispatch_tools`, `execute_approved`). */
  readonly pending: readonly ToolCall[];
}

/**
 * A node of the level being expanded: its world, its invariant monitor and their fingerprints
 * (the trace's is folded record by record, so a step that adds none keeps its parent's).
 */
interface Open {
  readonly world: World;
  readonly monitor: MonitorState;
  readonly stateHi: number;
  readonly stateLo: number;
  readonly traceHi: number;
  readonly traceLo: number;
  readonly monitorHi: number;
  readonly monitorLo: number;
}

/**
 * Explores every turn of `agent` within the options' bounds and checks the properties on every edge.
 *
 * @example
 * const result = await checkAgent(agent, { properties: [neverWithoutApproval('delete_file')] });
 * if (result.violations.length > 0) console.log(result.violations[0].message);
 */
export async function checkAgent(agent: CheckedAgent, options: CheckAgentOptions = {}): Promise<CheckAgentResult> {
  const started = performance.now();
  checkOptions(options);
  const rules = await agentRules(agent, options);
  const { initial, limits, stepsOf, properties } = explorationOf(agent, options, rules);
  const maxDepth = options.maxDepth ?? 60;
  const maxStates = options.maxStates ?? 2_000_000;
  const maxViolations = options.maxViolations ?? 20;
  const puritySample = options.puritySample ?? 16;
  const run = options.step ?? coreStep;

  // Nodes and turn states by 64-bit fingerprint (fingerprint.ts), as exploreTurn keeps them.
  const reuse = options.step === undefined;
  const seen = new FingerprintSet();
  const turnStates = new FingerprintSet();
  const fp = new Fingerprint();
  const hasher = new NodeHasher(reuse);
  const checker = new StepChecker();
  const terminalOutcomes: Record<string, number> = {};
  const violations: AgentViolation[] = [];
  const levels: Level[] = [];
  const broken = new Set<string>();
  let violationCount = 0;
  let transitions = 0;

  /** A violation on `step`, taken from node `at` of the level being expanded. */
  const report = (at: number, step: AgentStep, trace: AgentTrace, property: string, message: string): void => {
    violationCount += 1;
    if (broken.has(property) || broken.size >= maxViolations) return;
    broken.add(property);
    violations.push({ property, message, path: [...replayPath(levels, at, initial, run, stepsOf), step], trace });
  };

  /**
   * True when the node is new; a new distinct turn state is counted and checked alone (core's
   * state invariants and parseTurnState, invariant 3, once per state).
   */
  const visit = (node: Open, at: number, step: AgentStep | null): boolean => {
    fp.pair(node.traceHi, node.traceLo, node.monitorHi, node.monitorLo);
    fp.pair(node.stateHi, node.stateLo, fp.hi, fp.lo);
    if (!seen.add(fp.hi, fp.lo)) return false;
    const w = node.world;
    if (turnStates.add(node.stateHi, node.stateLo)) {
      if (isTerminal(w.turn)) {
        const label = outcomeOf(w.turn);
        terminalOutcomes[label] = (terminalOutcomes[label] ?? 0) + 1;
      }
      if (step !== null)
        for (const problem of [...stateInvariantProblems(w.turn, 'state after'), textParseProblem(JSON.stringify(w.turn))])
          if (problem !== undefined) report(at, step, w.trace, 'invariant 3', problem);
    }
    return true;
  };

  const first = hasher.first(initial);
  visit(first, -1, null);
  let frontier: Open[] = [first];
  let depth = 0;
  let cut: 'maxStates' | 'memory' | null = null;
  while (frontier.length > 0 && depth < maxDepth && cut === null) {
    const next: Open[] = [];
    const parents: number[] = [];
    const stepIndices: number[] = [];
    for (let index = 0; index < frontier.length && cut === null; index++) {
      if (index % HEAP_LOOK_EVERY === HEAP_LOOK_EVERY - 1 && heapNearLimit()) {
        cut = 'memory';
        break;
      }
      const node = frontier[index]!;
      const { world, monitor } = node;
      const steps = stepsOf(world);
      // The purity re-runs take a whole node's edges, so its frozen copy serves them all.
      const pure = sampled(index, depth, puritySample);
      for (let s = 0; s < steps.length; s++) {
        const step = steps[s]!;
        transitions += 1;
        let record: TraceStep;
        try {
          const [after, effects] = run(world.turn, step.event);
          record = { state: world.turn, event: step.event, next: after, effects };
        } catch (error) {
          record = { state: world.turn, event: step.event, next: world.turn, effects: [], thrown: errorMessage(error) };
        }
        const nextMonitor = checker.check(limits, record, depth, monitor, {
          step: run,
          purity: pure,
          parseStates: false,
          stateInvariants: false,
        });
        if (checker.violations.length > 0) {
          for (const v of checker.violations) report(index, step, world.trace, `invariant ${v.invariant}`, v.message);
          checker.violations.length = 0;
        }
        if (record.thrown !== undefined) continue;

        const added = recordsOf(step.event);
        const child = advance(world, step, record.next, record.effects);
        const unapproved = approvalProblem(world, step);
        if (unapproved !== undefined)
          report(index, step, child.trace, 'nothing runs without the approval its rules need', unapproved);
        if (added.length > 0)
          for (const v of evaluate(properties, child.trace)) report(index, step, child.trace, v.property, v.message);

        // A state given back as it was (a terminal state absorbing an event) with nothing else
        // changed is its own parent, visited. Only where objects never change (core's step).
        const sameState = record.next === world.turn && reuse;
        if (sameState && added.length === 0 && nextMonitor === monitor) continue;
        const open = hasher.child(node, child, nextMonitor, added, !sameState);
        // A terminal state is checked (absorption) but not expanded further than once.
        if (visit(open, index, step) && !(isTerminal(world.turn) && record.next === world.turn)) {
          next.push(open);
          parents.push(index);
          stepIndices.push(s);
        }
        if (seen.size >= maxStates) cut = 'maxStates';
      }
    }
    if (cut === null) {
      levels.push({ parents: Int32Array.from(parents), choices: Int32Array.from(stepIndices) });
      frontier = next;
    }
    depth += 1;
    options.onProgress?.({ states: seen.size, frontier: frontier.length, depth });
  }

  const result: CheckAgentResult = {
    states: seen.size,
    transitions,
    depth,
    exhaustive: frontier.length === 0 && cut === null,
    cutOff: cut ?? (frontier.length > 0 ? 'maxDepth' : null),
    violations,
    violationCount,
    calls: rules.choices,
    skipped: rules.skipped,
    properties: [
      'the turn contract (invariants 1-10)',
      'nothing runs without the approval its rules need',
      ...properties.map((p) => p.name),
    ],
    terminalOutcomes,
    ms: Math.round(performance.now() - started),
  };
  const firstViolation = violations[0];
  if (options.out !== undefined && firstViolation !== undefined)
    writeFileSync(options.out.file, counterexampleTest(firstViolation, options.out));
  return result;
}

/**
 * What the exploration of `agent` starts from: its first turn state under its limits (with its
 * loop-exempt tools, as the interpreters start its turns), the steps tried from a world, and the
 * properties checked (the built-in ones, then the user's).
 */
function explorationOf(
  agent: CheckedAgent,
  options: CheckAgentOptions,
  rules: AgentRules,
): { initial: TurnState; limits: TurnState['limits']; stepsOf: (world: World) => AgentStep[]; properties: AgentProperty[] } {
  const limitsInput = layerLimits([agent.limits], rules.config.loopExempt);
  const initial = createTurn(limitsInput === undefined ? { id: 'turn-1' } : { id: 'turn-1', limits: limitsInput });
  const limits = initial.limits;
  const replies = replySets(rules.choices, Math.min(options.maxCallsPerReply ?? 2, limits.maxCallsPerReply));
  const usage = replyUsage(limits);
  const hasOutputCheck = agent.output !== undefined || agent.check !== undefined;
  return {
    initial,
    limits,
    stepsOf: (world) => stepsFrom(world, rules, replies, hasOutputCheck, usage),
    properties: [...builtInProperties(agent), ...(options.properties ?? [])],
  };
}

/**
 * The fingerprints of the nodes, made from their structure as exploreTurn makes them: the turn
 * state's and the monitor's, and the trace's, folded record by record (a record by its call id,
 * tool, decision, source, outcome and input) so that a step that adds none keeps its parent's.
 * With `reuse` (core's step, which never changes an object it was given) the fingerprints of the
 * fields a state shares with the one before are reused; a reducer under test gets its states
 * hashed whole.
 */
class NodeHasher {
  readonly #state: ValueFingerprint;
  readonly #monitor = new ValueFingerprint({ reuse: true });
  readonly #record = new ValueFingerprint({ reuse: false });
  readonly #pair = new Fingerprint();

  constructor(reuse: boolean) {
    this.#state = new ValueFingerprint({ reuse });
  }

  /** The start: the first turn state, an empty trace, the first monitor. */
  first(initial: TurnState): Open {
    const monitor = initialMonitor(initial);
    this.#state.value(initial);
    this.#monitor.value(monitor);
    return {
      world: { turn: initial, usage: { total: 0, perTool: {} }, trace: [], pending: [] },
      monitor,
      stateHi: this.#state.hi,
      stateLo: this.#state.lo,
      traceHi: 0,
      traceLo: 0,
      monitorHi: this.#monitor.hi,
      monitorLo: this.#monitor.lo,
    };
  }

  /** The node after an edge out of `parent`: its world, its monitor, the records the edge added, and whether its turn state is new. */
  child(parent: Open, world: World, monitor: MonitorState, added: readonly CallRecord[], newState: boolean): Open {
    let { stateHi, stateLo, traceHi, traceLo, monitorHi, monitorLo } = parent;
    if (newState) {
      this.#state.value(world.turn);
      [stateHi, stateLo] = [this.#state.hi, this.#state.lo];
    }
    for (const r of added) {
      this.#record.value([r.callId, r.tool, r.decision, r.source, r.outcome, r.input]);
      this.#pair.pair(traceHi, traceLo, this.#record.hi, this.#record.lo);
      [traceHi, traceLo] = [this.#pair.hi, this.#pair.lo];
    }
    if (monitor !== parent.monitor) {
      this.#monitor.value(monitor);
      [monitorHi, monitorLo] = [this.#monitor.hi, this.#monitor.lo];
    }
    return { world, monitor, stateHi, stateLo, traceHi, traceLo, monitorHi, monitorLo };
  }
}

/** The world after `step`: the turn `step` led to, the records it added, the calls it waits on. */
function advance(world: World, step: AgentStep, turn: TurnState, effects: readonly Effect[]): World {
  const added = recordsOf(step.event);
  return {
    turn,
    usage: added.length === 0 ? world.usage : usageAfter(world.usage, added),
    trace: added.length === 0 ? world.trace : [...world.trace, ...added],
    pending: pendingCalls(effects, world.pending, turn),
  };
}

/**
 * The steps from the start to node `at` of the last level in `levels` (-1: the start itself),
 * rebuilt by replaying each node's steps from the start.
 */
function replayPath(
  levels: readonly Level[],
  at: number,
  initial: TurnState,
  run: StepFunction,
  stepsOf: (world: World) => AgentStep[],
): AgentStep[] {
  const path: AgentStep[] = [];
  let world: World = { turn: initial, usage: { total: 0, perTool: {} }, trace: [], pending: [] };
  for (const choice of choicesTo(levels, at)) {
    const step = stepsOf(world)[choice];
    if (step === undefined) break;
    path.push(step);
    try {
      const [after, effects] = run(world.turn, step.event);
      world = advance(world, step, after, effects);
    } catch {
      break;
    }
  }
  return path;
}

/** Throws a TypeError naming the first option that is not what it must be. */
function checkOptions(options: CheckAgentOptions): void {
  if (options === null || typeof options !== 'object')
    throw new TypeError('checkAgent(agent, options): options must be an object.');
  for (const key of ['maxCallsPerReply', 'maxDepth', 'maxStates', 'maxViolations', 'puritySample'] as const) {
    const value = options[key];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1))
      throw new TypeError(`checkAgent: ${key} must be a whole number ≥ 1, got ${String(value)}.`);
  }
  const properties = options.properties ?? [];
  if (!Array.isArray(properties))
    throw new TypeError('checkAgent: properties must be an array (neverWithoutApproval, atMostCalls, …).');
  properties.forEach((p: unknown, i) => {
    const q = p as AgentProperty | null;
    if (q === null || typeof q !== 'object' || typeof q.name !== 'string' || typeof q.check !== 'function')
      throw new TypeError(
        `checkAgent: properties[${i}] is not a property; make it with property(name, holds) or the vocabulary.`,
      );
  });
  for (const [key, kinds] of [
    ['hookAnswers', ['continue', 'approve', 'halt', 'rewrite']],
    ['policyAnswers', ['none', 'allow', 'ask', 'deny']],
  ] as const) {
    const answers = options[key];
    if (answers === undefined) continue;
    if (!Array.isArray(answers) || answers.length === 0) throw new TypeError(`checkAgent: ${key} must be a non-empty array.`);
    answers.forEach((a: unknown, i) => {
      const kind = (a as { kind?: unknown } | null)?.kind;
      if (typeof kind !== 'string' || !(kinds as readonly string[]).includes(kind))
        throw new TypeError(`checkAgent: ${key}[${i}] must be { kind } with kind one of ${kinds.join(', ')}.`);
      if (kind === 'rewrite' && !('input' in (a as object)))
        throw new TypeError(`checkAgent: ${key}[${i}] rewrites to no input: add { kind: 'rewrite', input }.`);
    });
  }
}

function outcomeOf(state: TurnState): string {
  const outcome = state.outcome;
  if (outcome === null) return state.status;
  if (outcome.status === 'stopped') return `stopped:${outcome.stopReason}`;
  if (outcome.status === 'failed') return `failed:${outcome.error.kind}`;
  return 'cancelled';
}

function recordsOf(event: TurnEvent): readonly CallRecord[] {
  return 'records' in event && event.records !== undefined ? event.records : [];
}

function usageAfter(usage: BudgetUsage, records: readonly CallRecord[]): BudgetUsage {
  let total = usage.total;
  const perTool: Record<string, number> = { ...usage.perTool };
  for (const r of records) {
    if (r.attempts === 0) continue;
    total += 1;
    perTool[r.tool] = (perTool[r.tool] ?? 0) + 1;
  }
  return { total, perTool };
}

/** The calls the turn waits on after a step: those of its blocking `dispatch_tools` or `execute_approved` effect. */
function pendingCalls(effects: readonly Effect[], before: readonly ToolCall[], after: TurnState): readonly ToolCall[] {
  for (const effect of effects) {
    if (effect.type === 'dispatch_tools' || effect.type === 'execute_approved') return effect.calls;
  }
  return after.status === 'dispatching' || after.status === 'executing_approved' ? before : [];
}

/** A call run by `execute_approved` that the state it ran from does not show approved by a person. */
function approvalProblem(world: World, step: AgentStep): string | undefined {
  if (step.event.type !== 'approved_tools_completed') return undefined;
  const decisions = world.turn.batch?.decisions ?? {};
  for (const call of world.pending) {
    const ran = step.outcomes?.[call.id] !== undefined;
    if (ran && decisions[call.id]?.type !== 'approve')
      return `${call.id} (${call.name}) ran after approval without a person's approve decision`;
  }
  return undefined;
}

/** Every set of 1..`size` distinct calls, each set in choice order. */
function replySets(choices: readonly CallChoice[], size: number): CallChoice[][] {
  const out: CallChoice[][] = [];
  const grow = (start: number, picked: CallChoice[]): void => {
    if (picked.length > 0) out.push(picked);
    if (picked.length === size) return;
    for (let i = start; i < choices.length; i++) grow(i + 1, [...picked, choices[i]!]);
  };
  grow(0, []);
  // Smaller replies first: breadth-first then finds the path with the fewest calls among the shortest.
  return out.sort((a, b) => a.length - b.length);
}

const callText = (c: { name: string; input: unknown }): string => `${c.name}(${JSON.stringify(c.input)})`;

/** The steps the exploration tries from a world: the agent's alphabet. */
function stepsFrom(
  world: World,
  rules: AgentRules,
  replies: readonly CallChoice[][],
  hasOutputCheck: boolean,
  usage: { readonly usage?: { inputTokens: number; outputTokens: number; cost: number } },
): AgentStep[] {
  const state = world.turn;
  const out: AgentStep[] = [];
  switch (state.status) {
    case 'ready':
      out.push({ label: 'start', event: { type: 'start', input: 'Model-checked turn.' } });
      break;
    case 'calling_model':
      out.push({
        label: 'reply: text',
        event: { type: 'model_responded', response: { text: 'Done.', toolCalls: [], ...usage } },
      });
      for (const reply of replies) {
        const toolCalls = reply.map((c, i) => ({ id: freshCallId(state, i), name: c.tool, input: c.input }));
        out.push({
          label: `reply: ${toolCalls.map(callText).join(', ')}`,
          event: { type: 'model_responded', response: { text: '', toolCalls, ...usage } },
        });
      }
      break;
    case 'dispatching':
      out.push(...dispatchSteps(world, rules));
      break;
    case 'awaiting_approval': {
      const open = undecided(state).map((p) => p.call.id);
      const decide = (label: string, entries: Array<[string, 'approve' | 'reject']>): void => {
        const decisions = Object.fromEntries(
          entries.map(([id, type]) => [id, type === 'approve' ? { type } : { type, reason: 'not this one' }]),
        );
        out.push({ label, event: { type: 'approvals_decided', decisions } });
      };
      decide(
        `approve ${open.join(', ')}`,
        open.map((id) => [id, 'approve']),
      );
      decide(
        `reject ${open.join(', ')}`,
        open.map((id) => [id, 'reject']),
      );
      if (open.length >= 2) {
        const [head, ...rest] = open as [string, ...string[]];
        decide(`approve ${head}, reject ${rest.join(', ')}`, [
          [head, 'approve'],
          ...rest.map((id): [string, 'reject'] => [id, 'reject']),
        ]);
      }
      out.push({ label: 'nobody decides (the approval expires)', event: { type: 'approval_expired' } });
      break;
    }
    case 'executing_approved':
      out.push(...executeSteps(world, rules));
      break;
    case 'steering':
      out.push({ label: 'compacted', event: { type: 'compacted' } });
      break;
    case 'finalizing':
      out.push({ label: 'output accepted', event: { type: 'output_accepted', output: state.candidate ?? '' } });
      if (hasOutputCheck)
        out.push({ label: 'output rejected', event: { type: 'output_rejected', reason: 'Not in the asked format.' } });
      break;
    case 'stopped':
    case 'failed':
    case 'cancelled':
      out.push({ label: 'start', event: { type: 'start', input: 'again' } });
      return out;
  }
  out.push({ label: 'cancel', event: { type: 'cancel', reason: 'user pressed stop' } });
  return out;
}

type Planned =
  | {
      readonly kind: 'run';
      readonly call: ToolCall;
      readonly input: JsonValue;
      readonly source: string;
      readonly decision: string;
    }
  | {
      readonly kind: 'deny';
      readonly call: ToolCall;
      readonly source: string;
      readonly reason: string;
      readonly decision: string;
    }
  | { readonly kind: 'park'; readonly call: ToolCall; readonly input: JsonValue; readonly reason: string };

/** Every combination of a verdict per call, then of an outcome per call that runs. */
function dispatchSteps(world: World, rules: AgentRules): AgentStep[] {
  const calls = world.pending;
  const options = calls.map((call) => rules.verdicts(call.name, call.input));
  const out: AgentStep[] = [];
  const pick = (i: number, chosen: Array<{ plan: Planned; assumed?: { hook: HookAnswer; policy: PolicyAnswer } }>): void => {
    if (i === calls.length) {
      out.push(...withOutcomes(world, rules, chosen, 'dispatch'));
      return;
    }
    const call = calls[i]!;
    const under = options[i]!;
    for (const { verdict, hook, policy } of under) {
      const assumed = under.length > 1 || hook.kind !== 'continue' || policy.kind !== 'none' ? { hook, policy } : undefined;
      const plan: Planned =
        verdict.kind === 'run'
          ? { kind: 'run', call, input: verdict.input, source: verdict.source, decision: 'allow' }
          : verdict.kind === 'deny'
            ? { kind: 'deny', call, source: verdict.source, reason: verdict.reason, decision: 'deny' }
            : { kind: 'park', call, input: verdict.input, reason: verdict.reason };
      pick(i + 1, [...chosen, { plan, ...(assumed === undefined ? {} : { assumed }) }]);
    }
  };
  pick(0, []);
  return out;
}

/** The approved calls run: the deny rules in force now are read again (deny always wins), then the budget. */
function executeSteps(world: World, rules: AgentRules): AgentStep[] {
  const chosen = world.pending.map((call) => {
    const tool = rules.config.tools.get(call.name);
    const denial = tool === undefined ? undefined : denialNow(rules.config, { call, tool, input: call.input });
    const plan: Planned =
      tool === undefined
        ? { kind: 'deny', call, source: 'unknown_tool', reason: `unknown tool ${call.name}`, decision: 'deny' }
        : denial !== undefined
          ? { kind: 'deny', call, source: denial.source, reason: denial.reason, decision: 'deny' }
          : { kind: 'run', call, input: call.input, source: 'user', decision: 'user_approved' };
    return { plan };
  });
  return withOutcomes(world, rules, chosen, 'execute');
}

/** The budget ledger over the plans in call order, then each combination of run outcomes, as events. */
function withOutcomes(
  world: World,
  rules: AgentRules,
  chosen: ReadonlyArray<{ plan: Planned; assumed?: { hook: HookAnswer; policy: PolicyAnswer } }>,
  phase: 'dispatch' | 'execute',
): AgentStep[] {
  // The dispatcher's own ledger, started from the world's counters: calls are admitted in call order.
  const ledger = new BudgetLedger(rules.config.budget, world.usage);
  const admitted = chosen.map(({ plan }): Planned => {
    if (plan.kind !== 'run') return plan;
    const breach = ledger.reserve(plan.call.name);
    return breach === undefined
      ? plan
      : { kind: 'deny', call: plan.call, source: breach.source, reason: breach.text, decision: 'deny' };
  });
  const runs = admitted.filter((p) => p.kind === 'run');
  const assumed = Object.fromEntries(chosen.filter((c) => c.assumed !== undefined).map((c) => [c.plan.call.id, c.assumed!]));
  const out: AgentStep[] = [];
  for (let mask = 0; mask < 1 << runs.length; mask++) {
    const outcomes: Record<string, 'ok' | 'failed'> = {};
    runs.forEach((p, i) => {
      outcomes[p.call.id] = (mask >> i) & 1 ? 'failed' : 'ok';
    });
    const results: ToolResult[] = [];
    const parked: ParkedCall[] = [];
    const records: CallRecord[] = [];
    for (const plan of admitted) {
      const { call } = plan;
      if (plan.kind === 'park') {
        parked.push({ call, input: plan.input, reason: plan.reason });
        continue;
      }
      const base = { turnId: world.turn.id, callId: call.id, tool: call.name, durationMs: 0 };
      if (plan.kind === 'deny') {
        const kind = plan.source.startsWith('budget:') ? 'budget' : plan.source === 'invalid_input' ? 'invalid_input' : 'denied';
        results.push({ callId: call.id, name: call.name, output: plan.reason, isError: true, errorKind: kind });
        records.push({
          ...base,
          input: call.input,
          decision: plan.decision,
          source: plan.source,
          outcome: kind,
          attempts: 0,
          reason: plan.reason,
        });
        continue;
      }
      const failed = outcomes[call.id] === 'failed';
      results.push(
        failed
          ? { callId: call.id, name: call.name, output: 'The tool failed.', isError: true, errorKind: 'tool_error' }
          : { callId: call.id, name: call.name, output: `ok: ${call.name}`, isError: false },
      );
      records.push({
        ...base,
        input: plan.input,
        decision: plan.decision,
        source: plan.source,
        outcome: failed ? 'tool_error' : 'ok',
        attempts: 1,
      });
    }
    const event: TurnEvent =
      phase === 'dispatch'
        ? dispatchOutcomeEvent({ results, parked }, records)
        : { type: 'approved_tools_completed', results, records };
    const label = `${phase === 'dispatch' ? 'dispatch' : 'run approved'}: ${admitted.map((p) => planText(p, outcomes)).join(', ')}`;
    out.push({
      label,
      event,
      ...(runs.length === 0 ? {} : { outcomes }),
      ...(Object.keys(assumed).length === 0 ? {} : { assumed }),
    });
  }
  return out;
}

function planText(plan: Planned, outcomes: Readonly<Record<string, 'ok' | 'failed'>>): string {
  const id = plan.call.id;
  if (plan.kind === 'park') return `${id} waits for approval`;
  if (plan.kind === 'deny') return `${id} denied (${plan.source})`;
  return `${id} runs (${plan.source}) ${outcomes[id] === 'failed' ? 'and fails' : 'ok'}`;
}
