// Exhaustive exploration of a tree of two agents: a parent that may delegate with `transfer_task`
// and one child, each with its own small limits, through the real reducer. The alphabet answers
// the parent's effects and, while it delegates, its child's (wrapped as `child` events; decisions
// for the child's parked calls go to the parent, which passes them down). Every edge is checked
// against the multi-agent invariants of docs/agents.md:
//
//   A1 no child call runs (`execute_approved`) without an approval a person gave for it;
//   A2 the parent's result for a `transfer_task` call comes only after its child ended;
//   A3 a cancel ends the whole tree: the child ends in the same step, and every call the child
//      sent has a result in the child's transcript before its end;
//   A4 budgets hold across the tree: the parent's usage plus its running child's stays within the
//      parent's `maxModelCalls` and `maxToolCalls`;
//   A5 nothing is dispatched twice: no call of any turn of the tree is sent to `dispatch_tools` or
//      to `execute_approved` twice;
//   A6 the effects keep the contract: at most one blocking effect and it is last, `done` exactly
//      when the parent ends, and every state reads back with `parseTurnState` unchanged.
//
// The single-agent exploration (explore.ts) is untouched: this one has its own small alphabet.

import { createTurn, isBlocking, isTerminal, parseTurnState, step as coreStep } from '@turnkit/core';
import type { Effect, ToolCall, TurnEvent, TurnLimitsInput, TurnState } from '@turnkit/core';
import type { AgentAction } from '@turnkit/core/internal';
import { errorMessage } from '@turnkit/core/internal';
import { outcomeLabel } from './explore.js';
import { Fingerprint, FingerprintSet } from './fingerprint.js';
import { stateJson } from './invariants.js';
import type { StepFunction } from './logic.js';

/** What `exploreAgents` explores: the two agents' limits and how deep. */
export interface ExploreAgentsOptions {
  /** The parent's limits. */
  readonly parent: TurnLimitsInput;
  /** The child agent's own limits (the parent's remaining budget applies over them). */
  readonly child: TurnLimitsInput;
  /** How many events deep to explore, at most. */
  readonly maxDepth: number;
  /** The reducer under test (default: core's `step`). */
  readonly step?: StepFunction;
}

/** A broken multi-agent invariant (A1–A6), with the events that lead to it. */
export interface AgentsViolation {
  /** The invariant broken (docs/agents.md lists A1–A6). */
  readonly invariant: 'A1' | 'A2' | 'A3' | 'A4' | 'A5' | 'A6';
  /** What went wrong, in a sentence. */
  readonly message: string;
  /** The event labels from the start to the offending step. */
  readonly path: readonly string[];
}

/** What `exploreAgents` found: distinct states, edges, how the turns ended, and the violations. */
export interface ExploreAgentsResult {
  /** Distinct states reached. */
  readonly states: number;
  /** Edges explored (an event applied to a state). */
  readonly transitions: number;
  /** How many explored paths ended each way (`stopped:completed`, `failed`, `cancelled`, …). */
  readonly terminalOutcomes: Readonly<Record<string, number>>;
  /** Every broken invariant found, each with its path. */
  readonly violations: readonly AgentsViolation[];
  /** The deepest level reached. */
  readonly depth: number;
  /** True when no new state was left to explore within `maxDepth`. */
  readonly exhaustive: boolean;
}

/** What a path has done so far, beyond the state: the monitor of the invariants. */
interface History {
  /** `<turn id> <call id>` of every call sent to dispatch_tools, and of every call sent to execute_approved. */
  readonly dispatched: readonly string[];
  readonly executed: readonly string[];
  /** `<turn id> <call id>` of every child call a person approved. */
  readonly approved: readonly string[];
  /** Call ids of transfer_task calls whose child turn ended. */
  readonly ended: readonly string[];
}

interface Node {
  readonly state: TurnState;
  readonly history: History;
  readonly path: readonly string[];
}

const NO_HISTORY: History = { dispatched: [], executed: [], approved: [], ended: [] };

/**
 * Explores every state of a parent with one child reachable within `maxDepth` events, checking
 * invariants A1–A6 on every edge.
 *
 * @example
 * const result = exploreAgents({ parent: { maxIterations: 2, budget: { maxModelCalls: 4 } }, child: { maxIterations: 1 }, maxDepth: 40 });
 * if (result.violations.length > 0 || !result.exhaustive) throw new Error('model check failed');
 */
export function exploreAgents(options: ExploreAgentsOptions): ExploreAgentsResult {
  const run = options.step ?? coreStep;
  const initial = createTurn({ id: 'parent', agent: 'supervisor', limits: options.parent });
  const childLimits = options.child;
  // Nodes by 64-bit fingerprint (fingerprint.ts), as exploreTurn keeps them.
  const seen = new FingerprintSet();
  const fp = new Fingerprint();
  const terminalOutcomes: Record<string, number> = {};
  const violations: AgentsViolation[] = [];
  let transitions = 0;
  let frontier: Node[] = [{ state: initial, history: NO_HISTORY, path: [] }];
  fp.text(JSON.stringify(initial));
  seen.add(fp.hi, fp.lo);
  let depth = 0;
  while (frontier.length > 0 && depth < options.maxDepth) {
    const next: Node[] = [];
    for (const node of frontier) {
      if (isTerminal(node.state)) continue;
      for (const [label, event] of agentsAlphabet(node.state, childLimits)) {
        transitions += 1;
        const path = [...node.path, label];
        const report = (invariant: AgentsViolation['invariant'], message: string): void => {
          if (violations.length < 50) violations.push({ invariant, message, path });
        };
        let after: TurnState;
        let effects: readonly Effect[];
        try {
          [after, effects] = run(node.state, event);
        } catch (error) {
          report('A6', `step threw: ${errorMessage(error)}`);
          continue;
        }
        const history = checkEdge(node.state, event, after, effects, node.history, initial, report);
        fp.text(`${stateJson(after)}${JSON.stringify(history)}`);
        if (!seen.add(fp.hi, fp.lo)) continue;
        if (isTerminal(after)) terminalOutcomes[outcomeLabel(after)] = (terminalOutcomes[outcomeLabel(after)] ?? 0) + 1;
        next.push({ state: after, history, path });
      }
    }
    frontier = next;
    depth += 1;
  }
  return {
    states: seen.size,
    transitions,
    terminalOutcomes,
    violations,
    depth,
    exhaustive: frontier.every((n) => isTerminal(n.state)),
  };
}

/**
 * Walks one path of a parent with one child, choosing the event at each step by `choices` (index
 * into the alphabet, modulo its size), and checks A1–A6 on every edge: the exploration's checks
 * on paths longer than an exhaustive run reaches (fast-check generates the choices).
 */
export function walkAgents(
  options: Omit<ExploreAgentsOptions, 'maxDepth'> & {
    readonly choices: readonly number[];
    /** The step at which the path cancels (the alphabet offers no cancel at any other step); default: any step may. */
    readonly cancelAt?: number;
  },
): {
  readonly violations: readonly AgentsViolation[];
  readonly state: TurnState;
  readonly path: readonly string[];
} {
  const run = options.step ?? coreStep;
  const initial = createTurn({ id: 'parent', agent: 'supervisor', limits: options.parent });
  const violations: AgentsViolation[] = [];
  let state = initial;
  let history = NO_HISTORY;
  const path: string[] = [];
  for (const [index, choice] of options.choices.entries()) {
    if (isTerminal(state)) break;
    const offered = agentsAlphabet(state, options.child);
    const cancelAt = options.cancelAt;
    const alphabet =
      cancelAt === undefined
        ? offered
        : index === cancelAt
          ? offered.filter(([label]) => label === 'cancel')
          : offered.filter(([label]) => label !== 'cancel');
    const [label, event] = alphabet[choice % alphabet.length] as [string, TurnEvent];
    path.push(label);
    const report: Report = (invariant, message) => void violations.push({ invariant, message, path: [...path] });
    let after: TurnState;
    let effects: readonly Effect[];
    try {
      [after, effects] = run(state, event);
    } catch (error) {
      report('A6', `step threw: ${errorMessage(error)}`);
      break;
    }
    history = checkEdge(state, event, after, effects, history, initial, report);
    state = after;
  }
  return { violations, state, path };
}

type Report = (invariant: AgentsViolation['invariant'], message: string) => void;

/** Checks one edge and returns the history after it. */
function checkEdge(
  before: TurnState,
  event: TurnEvent,
  after: TurnState,
  effects: readonly Effect[],
  history: History,
  initial: TurnState,
  report: Report,
): History {
  const dispatched = [...history.dispatched];
  const executed = [...history.executed];
  const approved = [...history.approved];
  const ended = [...history.ended];
  // A1: the approvals a person gave in this event, for the child's parked calls.
  const child = before.agents?.child ?? null;
  if (event.type === 'approvals_decided' && child !== null && child.batch !== null) {
    for (const parked of child.batch.parked) {
      const decision = event.decisions[parked.call.id];
      if (decision?.type === 'approve') approved.push(`${child.id} ${parked.call.id}`);
    }
  }
  // A6: one blocking effect at most, last; done exactly when the parent ends.
  const blocking = effects.filter((e) => isBlocking(e));
  if (blocking.length > 1 || (blocking.length === 1 && effects.at(-1) !== blocking[0]))
    report('A6', 'a blocking effect is not the last effect, or there are two');
  if (effects.some((e) => e.type === 'done') !== isTerminal(after)) report('A6', '`done` does not match the end of the parent');
  try {
    const read = parseTurnState(JSON.parse(JSON.stringify(after)));
    if (stateJson(read) !== stateJson(after)) report('A6', 'the state does not read back unchanged');
  } catch (error) {
    report('A6', `the state does not read back: ${errorMessage(error)}`);
  }
  // Walk the effects in order, with the turn each one belongs to.
  const childCalls = new Map<string, Set<string>>();
  const walk = (effect: Effect, turnId: string): void => {
    if (effect.type === 'child') {
      const id = `${turnId}/${effect.callId}`;
      if (effect.effect.type === 'done') {
        const open = [...(childCalls.get(id) ?? [])];
        if (open.length > 0 && event.type === 'cancel')
          report('A3', `the child ${id} ended with calls without a result: ${open.join(', ')}`);
        ended.push(effect.callId);
      }
      walk(effect.effect, id);
      return;
    }
    if (effect.type === 'dispatch_tools' || effect.type === 'execute_approved') {
      const seenList = effect.type === 'dispatch_tools' ? dispatched : executed;
      for (const call of effect.calls) {
        const key = `${turnId} ${call.id}`;
        if (seenList.includes(key)) report('A5', `the call ${key} is sent to ${effect.type} twice`);
        seenList.push(key);
        if (effect.type === 'execute_approved' && turnId !== initial.id && !approved.includes(key))
          report('A1', `the child call ${key} runs without a person's approval`);
      }
    }
    if (effect.type === 'append' && turnId !== initial.id) {
      const calls = childCalls.get(turnId) ?? new Set<string>();
      const message = effect.message;
      if (message.role === 'assistant') for (const call of message.toolCalls) calls.add(call.id);
      if (message.role === 'tool') calls.delete(message.result.callId);
      childCalls.set(turnId, calls);
    }
    if (effect.type === 'append' && turnId === initial.id && effect.message.role === 'tool') {
      const result = effect.message.result;
      if (result.name === 'transfer_task' && !result.isError && !ended.includes(result.callId))
        report('A2', `the result of transfer_task ${result.callId} came before its child ended`);
    }
  };
  for (const effect of effects) walk(effect, before.id);
  // A3: a cancel ends the tree at once.
  if (event.type === 'cancel' && (after.agents?.child ?? null) !== null) report('A3', 'the child still runs after the cancel');
  if (event.type === 'cancel' && child !== null && !effects.some((e) => e.type === 'child' && e.effect.type === 'done'))
    report('A3', 'the running child did not end with the cancel');
  // A4: the tree's usage within the parent's budgets.
  const budget = after.limits.budget;
  const running = after.agents?.child ?? null;
  for (const [key, max] of [
    ['modelCalls', budget.maxModelCalls],
    ['toolCalls', budget.maxToolCalls],
  ] as const) {
    if (max === undefined) continue;
    const used = after.usage[key] + (running === null ? 0 : running.usage[key]);
    if (used > max) report('A4', `the tree used ${used} ${key}, past the parent's budget of ${max}`);
  }
  return { dispatched, executed, approved, ended };
}

const TRANSFER = { name: 'transfer_task', input: { agent: 'researcher', task: 'Find the opening date.' } };
const PUBLISH = { name: 'publish', input: { title: 'Bridge' } };

/** The events tried from `state`: the parent's answers, or, while it delegates, its child's (wrapped). */
export function agentsAlphabet(state: TurnState, childLimits: TurnLimitsInput): Array<[string, TurnEvent]> {
  const out: Array<[string, TurnEvent]> = [];
  const child = state.agents?.child ?? null;
  const first = state.agents?.delegations[0];
  if (state.status === 'delegating' && child !== null && first !== undefined) {
    for (const [label, event] of turnEvents(child, PUBLISH, childLimits)) {
      // Decisions go to the parent as they are (core passes them down); the rest wrapped.
      const routed = event.type === 'approvals_decided' || event.type === 'approval_expired';
      out.push([`child:${label}`, routed ? event : { type: 'child', callId: first.callId, event }]);
    }
  } else out.push(...turnEvents(state, TRANSFER, childLimits));
  out.push(['cancel', { type: 'cancel', reason: 'user pressed stop' }]);
  return out;
}

/** The answers of one turn: replies with a call of `tool`, results, parking, decisions. */
function turnEvents(state: TurnState, tool: Omit<ToolCall, 'id'>, childLimits: TurnLimitsInput): Array<[string, TurnEvent]> {
  const out: Array<[string, TurnEvent]> = [];
  const id = `call-${state.callIds.count + 1}`;
  const result = (call: ToolCall) => {
    const action: AgentAction | undefined =
      call.name === 'transfer_task'
        ? { type: 'transfer', agent: 'researcher', task: 'Find the opening date.', limits: childLimits }
        : undefined;
    const base = { callId: call.id, name: call.name, output: 'ok', isError: false };
    return action === undefined ? base : { ...base, action };
  };
  switch (state.status) {
    case 'ready':
      out.push(['start', { type: 'start', input: 'When did the bridge open?' }]);
      break;
    case 'calling_model': {
      out.push(['reply_text', { type: 'model_responded', response: { text: 'Done.', toolCalls: [] } }]);
      out.push([`reply_${tool.name}`, { type: 'model_responded', response: { text: '', toolCalls: [{ id, ...tool }] } }]);
      // Two calls in one reply: for the parent, two children that run one after the other.
      const second = `call-${state.callIds.count + 2}`;
      out.push([
        `reply_two_${tool.name}`,
        {
          type: 'model_responded',
          response: {
            text: '',
            toolCalls: [
              { id, ...tool },
              { id: second, ...tool },
            ],
          },
        },
      ]);
      out.push(['model_failed', { type: 'model_failed', error: { kind: 'provider_error', message: 'down' } }]);
      break;
    }
    case 'dispatching': {
      const calls = state.batch?.calls ?? [];
      out.push(['tools_completed', { type: 'tools_completed', results: calls.map(result) }]);
      out.push(['tools_parked', { type: 'tools_parked', held: [], parked: calls.map((call) => ({ call })) }]);
      break;
    }
    case 'awaiting_approval': {
      const parked = state.batch?.parked ?? [];
      const decide = (type: 'approve' | 'reject') =>
        Object.fromEntries(parked.map((p) => [p.call.id, type === 'approve' ? { type } : { type, reason: 'no' }]));
      out.push(['approve', { type: 'approvals_decided', decisions: decide('approve') }]);
      out.push(['reject', { type: 'approvals_decided', decisions: decide('reject') }]);
      out.push(['approval_expired', { type: 'approval_expired' }]);
      break;
    }
    case 'executing_approved': {
      const batch = state.batch;
      const approved = (batch?.parked ?? []).filter((p) => batch?.decisions[p.call.id]?.type === 'approve').map((p) => p.call);
      out.push(['approved_tools_completed', { type: 'approved_tools_completed', results: approved.map(result) }]);
      break;
    }
    case 'steering':
      out.push(['compacted', { type: 'compacted' }]);
      break;
    case 'finalizing':
      out.push(['output_accepted', { type: 'output_accepted', output: state.candidate ?? '' }]);
      break;
    default:
      break;
  }
  return out;
}
