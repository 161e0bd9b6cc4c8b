// The turn reducer. Everything that decides what a turn does next lives in this file.
//
// Rules of this file:
// - `step(state, event) -> [state, effects]` is a total function: no I/O, no clock, no randomness,
//   no promises, no throw (a last-resort catch turns an internal error into a failed turn).
// - Inputs are never mutated; every new state is a fresh object (unchanged parts are shared).
// - State, events and effects are plain JSON. Interpreters perform the effects and feed back
//   exactly one event per blocking effect; they make no decision of their own.
// - The transition table of docs/turn-contract.md is the `switch` in `transition` below: one arm
//   per status, one short case per event. Anything not in the table fails the turn with
//   `unexpected_event` and synthesised results, so no tool call is ever left without a result.

import { readEvent, type ParsedEvent } from './events.js';
import { sameBatch } from './signature.js';
import { idProblem } from './ids.js';
import { identifyCalls, NO_CALL_IDS } from './call-ids.js';
import { childLimits, DEFAULT_LIMITS, MAX_RETRY_DELAY_MS, stricterLimits, validateLimits } from './limits.js';
import { errorMessage } from './errors.js';
import { rejectionText, undecided } from './interpreter.js';
import { TURN_STATE_VERSION } from './state.js';
import type {
  AgentAction,
  ApprovalDecision,
  BatchCall,
  CallRecord,
  CallLlmRequest,
  Effect,
  ForcedReason,
  JsonValue,
  Message,
  ModelResponse,
  NoticeName,
  Outcome,
  ParkedCall,
  ResumeOptions,
  StopReason,
  TakenDecision,
  ToolCall,
  ToolResult,
  Delegation,
  TurnAgents,
  TurnError,
  TurnOptions,
  TurnBatch,
  TurnState,
  TurnUsage,
} from './types.js';

type Step = [TurnState, Effect[]];

// Shared by every batch that has none (a turn keeps its batch while it waits): frozen, so no turn
// can change another's; step never changes a state's parts, it makes new ones.
const NONE: readonly never[] = Object.freeze([]);
const NO_DECISIONS: Readonly<Record<string, ApprovalDecision>> = Object.freeze({});

const ZERO_USAGE: TurnUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0, cost: 0, modelCalls: 0, toolCalls: 0 };

/**
 * A new turn in status `ready`. Throws a `RangeError` naming the option when an option is invalid.
 *
 * @example
 * const turn = createTurn({ id: 'turn-1', limits: { maxIterations: 4 } });
 */
export function createTurn(options: TurnOptions): TurnState {
  if (options === null || typeof options !== 'object')
    throw new RangeError('createTurn needs an options object such as { id: "turn-1" }.');
  for (const key of Object.keys(options)) {
    if (key !== 'id' && key !== 'limits' && key !== 'agent')
      throw new RangeError(`createTurn got an unknown option '${key}'. Known options: id, limits, agent.`);
  }
  const agent = options.agent;
  if (agent !== undefined && (typeof agent !== 'string' || idProblem(agent) !== null))
    throw new RangeError(
      `createTurn option 'agent' must be an agent's name (1 to 256 printable characters), got ${JSON.stringify(agent) ?? String(agent)}.`,
    );
  if (typeof options.id !== 'string' || options.id.length === 0) {
    throw new RangeError(
      `createTurn option 'id' must be a non-empty string, got ${JSON.stringify(options.id) ?? String(options.id)}.`,
    );
  }
  return {
    version: TURN_STATE_VERSION,
    id: options.id,
    status: 'ready',
    limits: validateLimits(options.limits),
    round: 0,
    usage: ZERO_USAGE,
    forced: null,
    batch: null,
    lastBatch: null,
    repeats: 0,
    repairs: 0,
    recoveries: 0,
    candidate: null,
    nextModel: null,
    lastRequest: null,
    outcome: null,
    callIds: NO_CALL_IDS,
    agents: agent === undefined ? null : { agent, model: null, delegations: NONE, child: null },
  };
}

/** True when the turn has ended (`stopped`, `failed` or `cancelled`): `step` then keeps the state and returns no effects. */
export function isTerminal(state: TurnState): boolean {
  return state.status === 'stopped' || state.status === 'failed' || state.status === 'cancelled';
}

/**
 * Applies one event. Returns the next state and the effects an interpreter must perform, in order.
 * A terminal state absorbs every event (the same state object, no effects).
 */
export function step(state: TurnState, event: unknown): Step {
  try {
    if (isTerminal(state)) return [state, []];
    const parsed = readEvent(event);
    if (parsed.type === 'malformed') return unexpected(state, parsed.eventType, parsed.problem);
    return transition(state, parsed, event);
  } catch (error) {
    return internalError(state, error);
  }
}

function transition(state: TurnState, event: ParsedEvent, raw: unknown): Step {
  if (event.type === 'cancel') return cancel(state, event.reason ?? 'cancelled by the caller');
  if (event.type === 'cancel_batch') {
    if (state.batch === null)
      return ignored(state, `there is no tool batch in flight to cancel while the turn is ${state.status}`, []);
    return cancelBatch(state, state.batch, event.reason);
  }
  switch (state.status) {
    case 'ready':
      if (event.type === 'start') return start(state, event.input);
      break;
    case 'calling_model':
      if (event.type === 'model_responded') {
        if (event.response === null)
          return finish(state, failure('invalid_model_response', `The model's reply was malformed: ${event.problem}.`), []);
        return modelResponded(state, event.response);
      }
      if (event.type === 'model_failed') return modelFailed(state, event.error, event.partialOutput);
      break;
    case 'dispatching':
      if (event.type === 'tools_completed') return withHookNotices(event.records, toolsCompleted(state, event.results));
      if (event.type === 'tools_parked')
        return withHookNotices(event.records, toolsParked(state, event.held, event.parked, event.at));
      if (event.type === 'effect_failed' && event.effect === 'dispatch_tools') return dispatcherFailed(state, event.error);
      break;
    case 'awaiting_approval':
      if (event.type === 'approvals_decided') return approvalsDecided(state, liveBatch(state), event.decisions);
      if (event.type === 'approval_expired') return approvalExpired(state, liveBatch(state), event.now);
      break;
    case 'executing_approved':
      if (event.type === 'approved_tools_completed')
        return withHookNotices(event.records, approvedToolsCompleted(state, liveBatch(state), event.results));
      if (event.type === 'approvals_decided')
        return ignored(
          state,
          'approved calls are already executing',
          event.decisions.map(([id]) => id),
        );
      if (event.type === 'approval_expired') return ignored(state, 'approved calls are already executing', []);
      if (event.type === 'effect_failed' && event.effect === 'execute_approved') return dispatcherFailed(state, event.error);
      break;
    case 'delegating': {
      const child = liveChild(state);
      if (event.type === 'child') {
        if (event.callId === child.callId) return childStepped(state, step(child.state, event.event));
        return unexpected(
          state,
          event.type,
          `the child event is for call '${event.callId}', but the child turn running is for call '${child.callId}'`,
        );
      }
      // A decision for a parked call of the tree goes to the turn where it is parked: the child's.
      if (event.type === 'approvals_decided' || event.type === 'approval_expired')
        return childStepped(state, step(child.state, raw));
      break;
    }
    case 'steering':
      if (event.type === 'compacted') return compacted(state);
      if (event.type === 'effect_failed' && event.effect === 'compact')
        return finish(state, { status: 'failed', error: event.error }, []);
      break;
    case 'finalizing':
      if (event.type === 'output_accepted')
        return finish(state, { status: 'stopped', stopReason: state.forced ?? 'completed', output: event.output }, []);
      if (event.type === 'output_rejected') return outputRejected(state, event.reason);
      if (event.type === 'effect_failed' && event.effect === 'check_output')
        return finish(state, { status: 'failed', error: event.error }, []);
      break;
    case 'stopped':
    case 'failed':
    case 'cancelled':
      return [state, []];
    default:
      return assertNever(state.status);
  }
  return unexpected(state, event.type, `'${event.type}' is not expected while the turn is ${state.status}`);
}

// ---------------------------------------------------------------------------------------------
// ready

function start(state: TurnState, input: string | undefined): Step {
  const effects: Effect[] = [];
  if (input !== undefined) effects.push(append({ role: 'user', content: input }));
  effects.push(emit('turn_started', { id: state.id }), emit('iteration', { iteration: state.round + 1 }));
  return callModel(state, false, effects);
}

// ---------------------------------------------------------------------------------------------
// calling_model

function modelResponded(state: TurnState, response: ModelResponse): Step {
  const usage = addResponseUsage(state.usage, response.usage);

  // A forced final reply: tools were disabled, so any tool calls in it are dropped unread.
  if (state.forced !== null) return toFinalizing(state, usage, response.text, [append(assistantMessage(response, []))]);

  const bad = findBadCall(response.toolCalls);
  if (bad !== null) return finish(usedState(state, usage), failure('invalid_model_response', bad.message, bad.data), []);
  const { calls, ids } = identifyCalls(state.callIds, response.toolCalls);
  if (ids === state.callIds) return reply(state, usage, response, calls);
  const identified = draft(state);
  identified.callIds = ids;
  return reply(identified, usage, response, calls);
}

/** A well-formed reply whose calls have their turn ids (`calls`). */
function reply(state: TurnState, usage: TurnUsage, response: ModelResponse, calls: readonly ToolCall[]): Step {
  const exceeded = exceededTokenBudget(state, usage);
  if (exceeded !== null) {
    const effects: Effect[] = [append(assistantMessage(response, calls))];
    for (const call of calls)
      effects.push(appendResult(synthetic(call, `not executed: the turn's ${exceeded} budget is used up.`, 'budget')));
    return finish(usedState(state, usage), stopped('budget_exhausted', null), effects);
  }

  if (calls.length === 0) return toFinalizing(state, usage, response.text, [append(assistantMessage(response, calls))]);

  // A loop is the model repeating its reply: the whole batch is compared, whatever part of it runs.
  const loop = trackLoop(state, calls);
  if (loop.detected) {
    const effects: Effect[] = [append(assistantMessage(response, calls))];
    if (below(state.recoveries, state.limits.loopRecoveries))
      return recoverFromLoop(usedState(state, usage), calls, loop.repeats, effects);
    for (const call of calls)
      effects.push(
        appendResult(
          synthetic(
            call,
            'skipped: repeated. This exact batch of tool calls was already made; answer with what you have.',
            'not_executed',
          ),
        ),
      );
    effects.push(emit('limit_reached', { limit: 'loop_detected', repeats: loop.repeats }));
    const next = draft(state);
    next.usage = usage;
    next.lastBatch = loop.batch;
    next.repeats = loop.repeats;
    next.forced = 'loop_detected';
    return callModel(next, true, effects);
  }

  const { run, notExecuted } = planBatch(state, calls);
  if (run.length === 0) {
    // The tool-call budget is used up: nothing of the reply runs, and the turn stops.
    const effects: Effect[] = [append(assistantMessage(response, calls)), ...notExecuted.map(appendResult)];
    return finish(usedState(state, usage), stopped('budget_exhausted', null), effects);
  }

  const next = draft(state);
  next.status = 'dispatching';
  next.usage = withUsage(usage, { toolCalls: usage.toolCalls + run.length });
  next.lastBatch = loop.batch;
  next.repeats = loop.repeats;
  next.batch = { calls: run, notExecuted, held: NONE, parked: NONE, decisions: NO_DECISIONS };
  return [
    next,
    [
      append(assistantMessage(response, calls)),
      { type: 'persist', checkpoint: 'dispatching' },
      withAgent(state, { type: 'dispatch_tools', calls: run }),
    ],
  ];
}

/**
 * A failed model call. An error marked `retryable` is retried while `limits.maxModelRetries` and
 * `budget.maxModelCalls` allow: the same request again, with the retry's number and the wait
 * before it. Otherwise (or after partial output reached a reader) the turn fails with the error.
 */
function modelFailed(state: TurnState, error: TurnError, partialOutput: boolean): Step {
  const last = state.lastRequest;
  if (error.retryable === true && partialOutput) {
    const message = `${error.message} Part of the reply had already been streamed to the reader, so the call is not retried.`;
    return finish(state, { status: 'failed', error: { ...error, message, retryable: false } }, []);
  }
  const attempt = (last?.attempt ?? 0) + 1;
  const max = state.limits.budget.maxModelCalls;
  const fits = max === undefined || below(state.usage.modelCalls, max);
  if (error.retryable !== true || last === null || !(attempt <= state.limits.maxModelRetries) || !fits) {
    return finish(state, { status: 'failed', error }, []);
  }
  const delayMs = retryDelayMs(state.limits.modelRetryBackoffMs, attempt, error);
  const base: CallLlmRequest =
    last.modelOverride === undefined
      ? { iteration: last.iteration, final: last.final }
      : { iteration: last.iteration, final: last.final, modelOverride: last.modelOverride };
  const request: CallLlmRequest = { ...base, attempt, delayMs };
  const next = draft(state);
  next.usage = withUsage(state.usage, { modelCalls: state.usage.modelCalls + 1 });
  next.lastRequest = request;
  return [
    next,
    [
      emit('model_retry', { attempt, delayMs, error: error as unknown as JsonValue }),
      withAgent(state, { type: 'call_llm', request }),
    ],
  ];
}

/**
 * The wait before retry `attempt`: `backoffMs * 2 ** (attempt - 1)`, or the provider's hint
 * `error.data.retryAfterMs` when that is longer; at most MAX_RETRY_DELAY_MS either way.
 */
function retryDelayMs(backoffMs: number, attempt: number, error: TurnError): number {
  const backoff = Math.min(backoffMs * 2 ** (attempt - 1), MAX_RETRY_DELAY_MS);
  const data = error.data;
  const hint =
    data !== null && typeof data === 'object' && !Array.isArray(data)
      ? (data as { retryAfterMs?: unknown }).retryAfterMs
      : undefined;
  if (typeof hint !== 'number' || !Number.isFinite(hint) || hint <= 0) return backoff;
  return Math.max(backoff, Math.min(Math.ceil(hint), MAX_RETRY_DELAY_MS));
}

/**
 * A loop with a recovery left (`limits.loopRecoveries`): the repeated batch is skipped, the model is
 * told it is repeating itself, and the next call keeps its tools. `repeats` stays one short of the
 * threshold, so the same batch once more is the next loop; a recovery does not count as a round.
 */
function recoverFromLoop(state: TurnState, calls: readonly ToolCall[], repeats: number, effects: Effect[]): Step {
  const recoveries = state.recoveries + 1;
  for (const call of calls)
    effects.push(
      appendResult(
        synthetic(
          call,
          'skipped: repeated. This exact batch of tool calls was already made; it was not run again.',
          'not_executed',
        ),
      ),
    );
  effects.push(
    append({
      role: 'user',
      content: `You are repeating yourself: you asked for this exact batch of tool calls ${repeats} times in a row, so it was not run again. Use the results you already have, try a different approach, or answer.`,
    }),
    emit('limit_reached', { limit: 'loop_recovery', repeats, recoveriesLeft: state.limits.loopRecoveries - recoveries }),
  );
  const next = draft(state);
  next.repeats = state.limits.loopThreshold - 1;
  next.recoveries = recoveries;
  return callModel(next, false, effects);
}

function assistantMessage(response: ModelResponse, toolCalls: readonly ToolCall[]): Message {
  return response.reasoning === undefined
    ? { role: 'assistant', content: response.text, toolCalls }
    : { role: 'assistant', content: response.text, toolCalls, reasoning: response.reasoning };
}

function toFinalizing(state: TurnState, usage: TurnUsage, text: string, effects: Effect[]): Step {
  const next = draft(state);
  next.usage = usage;
  next.status = 'finalizing';
  next.candidate = text;
  effects.push({ type: 'check_output', candidate: text });
  return [next, effects];
}

/**
 * The first call of a reply with an unacceptable id or name (see ids.ts), else null. An empty id
 * is acceptable: the call gets a derived one (`identifyCalls`).
 */
function findBadCall(calls: readonly ToolCall[]): { message: string; data: JsonValue } | null {
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i] as ToolCall;
    const bad = (call.id === '' ? null : badName(i, 'id', call.id)) ?? badName(i, 'name', call.name);
    if (bad !== null) return bad;
  }
  return null;
}

/** The malformed-reply failure for call `index`'s `key`, or null when the value is acceptable. */
function badName(index: number, key: 'id' | 'name', value: string): { message: string; data: JsonValue } | null {
  const problem = idProblem(value);
  if (problem === null) return null;
  const field = `response.toolCalls[${index}].${key}`;
  return { message: `The model's reply was malformed: ${field} ${problem}.`, data: { field } };
}

/**
 * Which calls of a reply run: the first `maxCallsPerReply`, and no more than the tool-call budget
 * has left. Every other call gets a `not executed` result that says why; the ones that run are
 * always a prefix of the reply, so results stay in call order.
 */
function planBatch(
  state: TurnState,
  calls: readonly ToolCall[],
): { run: readonly ToolCall[]; notExecuted: readonly ToolResult[] } {
  const limit = state.limits.maxCallsPerReply;
  const perReply = Number.isSafeInteger(limit) && limit >= 1 ? limit : DEFAULT_LIMITS.maxCallsPerReply;
  const byReply = Math.min(calls.length, perReply);
  const maxTools = state.limits.budget.maxToolCalls;
  const runs = maxTools === undefined ? byReply : Math.min(byReply, left(state.usage.toolCalls, maxTools));
  if (runs === calls.length) return { run: calls, notExecuted: NONE };
  const overReply = `not executed: the reply asked for ${calls.length} tool calls; limits.maxCallsPerReply is ${perReply}.`;
  const overBudget = `not executed: the turn's tool call budget is used up (limits.budget.maxToolCalls is ${String(maxTools)}).`;
  const notExecuted: ToolResult[] = [];
  for (let i = runs; i < calls.length; i++)
    notExecuted.push(
      i < byReply
        ? synthetic(calls[i] as ToolCall, overBudget, 'budget')
        : synthetic(calls[i] as ToolCall, overReply, 'not_executed'),
    );
  return { run: calls.slice(0, runs), notExecuted };
}

/** How many more of something `max` allows after `used`; 0 when either is not a safe integer. */
function left(used: number, max: number): number {
  return below(used, max) ? max - used : 0;
}

/**
 * True while `count` is below `max`. A count or limit that is not a safe integer (a corrupt or
 * tampered state: NaN, Infinity, or past 2^53 where adding 1 changes nothing) counts as the limit
 * reached, so no counter that cannot advance can keep a turn going.
 */
function below(count: number, max: number): boolean {
  return Number.isSafeInteger(count) && Number.isSafeInteger(max) && count < max;
}

/**
 * Loop detection: exempt calls are left out; an all-exempt batch changes nothing. Batches are
 * compared structurally (names and inputs, ids and key order ignored), which is what
 * `batchSignature` equality means, without building the signature text for every batch.
 */
function trackLoop(
  state: TurnState,
  calls: readonly ToolCall[],
): { detected: boolean; batch: readonly BatchCall[] | null; repeats: number } {
  const exempt = state.limits.loopExemptTools;
  const exemptNames = exempt.length === 0 ? null : new Set(exempt);
  const counted = exemptNames === null ? calls : calls.filter((call) => !exemptNames.has(call.name));
  if (counted.length === 0) return { detected: false, batch: state.lastBatch, repeats: state.repeats };
  const repeats = state.lastBatch !== null && sameBatch(counted, state.lastBatch) ? state.repeats + 1 : 1;
  const threshold = state.limits.loopThreshold;
  // Only names and inputs are kept, so two states that differ in call ids alone are the same state.
  const batch = repeats > 1 ? state.lastBatch : counted.map(({ name, input }): BatchCall => ({ name, input }));
  return { detected: threshold > 0 && repeats >= threshold, batch, repeats };
}

function addResponseUsage(usage: TurnUsage, add: Partial<ModelResponse['usage']> | undefined): TurnUsage {
  if (add === undefined) return usage;
  const inputTokens = add.inputTokens ?? 0;
  const outputTokens = add.outputTokens ?? 0;
  return withUsage(usage, {
    inputTokens: usage.inputTokens + inputTokens,
    outputTokens: usage.outputTokens + outputTokens,
    totalTokens: usage.totalTokens + (add.totalTokens ?? inputTokens + outputTokens),
    cost: usage.cost + (add.cost ?? 0),
  });
}

/** The name of the first token or cost budget that `usage` now exceeds, else null. */
function exceededTokenBudget(state: TurnState, usage: TurnUsage): string | null {
  const budget = state.limits.budget;
  if (budget.maxInputTokens !== undefined && usage.inputTokens > budget.maxInputTokens) return 'input token';
  if (budget.maxOutputTokens !== undefined && usage.outputTokens > budget.maxOutputTokens) return 'output token';
  if (budget.maxTotalTokens !== undefined && usage.totalTokens > budget.maxTotalTokens) return 'total token';
  if (budget.maxCost !== undefined && usage.cost > budget.maxCost) return 'cost';
  return null;
}

// ---------------------------------------------------------------------------------------------
// dispatching

/**
 * The batch of a status that has one. `parseTurnState` guarantees it for a saved state; a state
 * built by hand without one fails the turn through the last-resort catch, never a crash.
 */
function liveBatch(state: TurnState): TurnBatch {
  if (state.batch === null) throw new Error(`the state is ${state.status} but has no batch`);
  return state.batch;
}

/**
 * A `hook_blocked` notice for each call a before-hook refused (its record: decision `deny`, source
 * `hook:<name>`, outcome `denied`), ahead of the step's own effects, so a UI can say so.
 */
function withHookNotices(records: readonly CallRecord[], [next, effects]: Step): Step {
  const notices: Effect[] = [];
  for (const r of records) {
    if (r.decision !== 'deny' || r.outcome !== 'denied' || !r.source.startsWith('hook:')) continue;
    const data = { callId: r.callId, tool: r.tool, hook: r.source.slice('hook:'.length) };
    notices.push(emit('hook_blocked', r.reason === undefined ? data : { ...data, reason: r.reason }));
  }
  return notices.length === 0 ? [next, effects] : [next, [...notices, ...effects]];
}

function toolsCompleted(state: TurnState, results: readonly ToolResult[]): Step {
  const { calls } = liveBatch(state);
  const mismatch = compareIds(
    calls.map((c) => c.id),
    results.map((r) => r.callId),
  );
  if (mismatch !== null) return incompleteBatch(state, mismatch);
  return applyBatch(state, inCallOrder(calls, results));
}

function toolsParked(state: TurnState, held: readonly ToolResult[], parked: readonly ParkedCall[], at?: number): Step {
  const batch = liveBatch(state);
  const received = [...held.map((r) => r.callId), ...parked.map((p) => p.call.id)];
  const mismatch = compareIds(
    batch.calls.map((c) => c.id),
    received,
  );
  if (mismatch !== null) return incompleteBatch(state, mismatch);
  if (parked.length === 0) return applyBatch(state, inCallOrder(batch.calls, held));
  // Park the calls under their sent identity, each with the input that runs if approved (the
  // dispatcher's hooks may have rewritten it; the person decides on that one).
  const sentById = new Map(batch.calls.map((c) => [c.id, c]));
  const parkedCalls = parked.map((p): ParkedCall => {
    const call = sentById.get(p.call.id) ?? p.call;
    const input = p.input ?? call.input;
    const parkedCall: ParkedCall = p.reason === undefined ? { call, input } : { call, input, reason: p.reason };
    if (p.expiresAfterMs === undefined) return parkedCall;
    // The approval's deadline counts from the interpreter's clock when the batch parked.
    const expiresAt = at === undefined ? undefined : Math.min(at + p.expiresAfterMs, Number.MAX_SAFE_INTEGER);
    return { ...parkedCall, expiresAfterMs: p.expiresAfterMs, ...(expiresAt === undefined ? {} : { expiresAt }) };
  });
  const next = draft(state);
  next.status = 'awaiting_approval';
  next.batch = { ...batch, held, parked: parkedCalls, decisions: NO_DECISIONS };
  // Persist before announcing: whoever hears the notice can rely on the parked state being saved.
  return [
    next,
    [{ type: 'persist', checkpoint: 'parked' }, emit('awaiting_approval', { pending: parkedCalls as unknown as JsonValue })],
  ];
}

type IdMismatch = { missing: string[]; unexpected: string[]; duplicated: string[] };

function compareIds(expected: readonly string[], received: readonly string[]): IdMismatch | null {
  if (sameInOrder(expected, received)) return null;
  const want = new Set(expected);
  const seen = new Set<string>();
  const duplicated = new Set<string>();
  const unexpected = new Set<string>();
  for (const id of received) {
    if (!want.has(id)) unexpected.add(id);
    else if (seen.has(id)) duplicated.add(id);
    seen.add(id);
  }
  const missing = expected.filter((id) => !seen.has(id));
  if (missing.length === 0 && unexpected.size === 0 && duplicated.size === 0) return null;
  return { missing: [...missing].sort(), unexpected: [...unexpected].sort(), duplicated: [...duplicated].sort() };
}

/** The common case, checked without allocating: the same distinct ids in the same order. */
function sameInOrder(expected: readonly string[], received: readonly string[]): boolean {
  if (expected.length !== received.length) return false;
  for (let i = 0; i < expected.length; i++) {
    if (expected[i] !== received[i]) return false;
    // Pending ids are distinct (a reply with a repeated id never dispatches), so equal-in-order means a match.
  }
  return true;
}

function incompleteBatch(state: TurnState, mismatch: IdMismatch): Step {
  const parts = [
    mismatch.missing.length > 0 ? `missing results for ${mismatch.missing.join(', ')}` : '',
    mismatch.unexpected.length > 0 ? `results for unknown calls ${mismatch.unexpected.join(', ')}` : '',
    mismatch.duplicated.length > 0 ? `more than one result for ${mismatch.duplicated.join(', ')}` : '',
  ].filter((part) => part.length > 0);
  const error = failure(
    'incomplete_batch',
    `The tool batch did not match the calls that were sent: ${parts.join('; ')}.`,
    mismatch,
  );
  // The mismatched results are discarded: each call without a result gets a synthesised one
  // (results held from before an approval, and denials, are kept).
  const effects = closeOpenCalls(state, 'not executed: the tool batch was incomplete and the turn failed.', 'not_executed');
  return finish(clearBatch(state), error, effects);
}

/** Results in the order of `calls`, each with the name of its call. `results` must match `calls` one to one. */
function inCallOrder(calls: readonly ToolCall[], results: readonly ToolResult[]): readonly ToolResult[] {
  if (
    calls.length === results.length &&
    calls.every((call, i) => results[i]?.callId === call.id && results[i]?.name === call.name)
  )
    return results;
  const byId = new Map(results.map((r) => [r.callId, r]));
  return calls.map((call) => {
    const result = byId.get(call.id) as ToolResult;
    return result.name === call.name ? result : { ...result, name: call.name };
  });
}

/**
 * A complete batch: its `transfer_task` calls first run their child turns (`delegate`); then its
 * results are appended in call order, handoffs and model changes applied, and the turn stops on a
 * hook's request or a budget the children used up, or goes on steering.
 */
function applyBatch(state: TurnState, results: readonly ToolResult[], effects: Effect[] = []): Step {
  if (state.agents !== null && results.some(isTransfer)) return delegate(state, state.agents, results, effects);
  for (const result of results) effects.push(appendResult(withoutAction(result)));
  for (const result of state.batch?.notExecuted ?? []) effects.push(appendResult(result));
  const next = clearBatch(state);
  applyActions(next, results, effects);
  // Child turns' usage was added to this turn's: a budget they used up ends it here.
  if (state.agents !== null && exceededTokenBudget(next, next.usage) !== null)
    return finish(next, stopped('budget_exhausted', null), effects);
  const stop = results.find((r) => r.stop !== undefined);
  if (stop?.stop !== undefined) return finish(next, stopped('hook_stopped', stop.stop.reason), effects);
  const round = state.round + 1;
  next.status = 'steering';
  next.round = round;
  next.nextModel = results.find((r) => r.modelOverride !== undefined)?.modelOverride ?? null;
  effects.push(
    emit('steering', { round }),
    { type: 'persist', checkpoint: 'boundary' },
    { type: 'compact', info: { round, usage: next.usage } },
  );
  return [next, effects];
}

/**
 * The interpreter's dispatcher threw instead of answering `dispatch_tools` or `execute_approved`:
 * every call of the batch without a result gets one saying so (held results and denials are
 * kept), and the turn fails with the interpreter's error.
 */
function dispatcherFailed(state: TurnState, error: TurnError): Step {
  const effects = closeOpenCalls(
    state,
    `not executed: the tool dispatcher failed before this call reported a result (${error.message}).`,
    'not_executed',
  );
  return finish(clearBatch(state), { status: 'failed', error }, effects);
}

/**
 * `cancel_batch`: the batch ends without the turn. Results already held and denials are kept;
 * every other call gets a `cancelled: …` result, then the batch is applied as a round (a hook's
 * stop in a held result still stops the turn) and the turn goes on to the next model call.
 */
function cancelBatch(state: TurnState, batch: TurnBatch, reason: string | undefined): Step {
  const why = reason === undefined ? '' : ` (${reason})`;
  const text = `cancelled: the tool batch was cancelled${why} before this call finished; the turn goes on without its result.`;
  const effects: Effect[] = [];
  const ended = endChild(state, reason ?? 'the tool batch was cancelled', effects);
  const byId = new Map([...batch.held, ...denials(batch)].map((r) => [r.callId, r]));
  return applyBatch(
    ended,
    batch.calls.map((call) => byId.get(call.id) ?? synthetic(call, text, 'cancelled')),
    effects,
  );
}

// ---------------------------------------------------------------------------------------------
// delegating: the batch's `transfer_task` calls run their child turns, one at a time, in call order

function isTransfer(result: ToolResult): boolean {
  return !result.isError && result.action?.type === 'transfer';
}

/** A result as the transcript keeps it: what core did with its `action` is in the transcript already. */
function withoutAction(result: ToolResult): ToolResult {
  if (result.action === undefined) return result;
  const { action: _applied, ...rest } = result;
  return rest;
}

/**
 * Applies the handoffs and model changes of a batch's successful results, in call order (the last
 * one wins): a handoff makes its agent active (its system prompt appended, its limits applied
 * where stricter, the model back to the agent's own); `change_model` sets the model.
 */
function applyActions(next: Draft, results: readonly ToolResult[], effects: Effect[]): void {
  if (next.agents === null) return;
  for (const result of results) {
    const action: AgentAction | undefined = result.isError ? undefined : result.action;
    if (action === undefined || next.agents === null) continue;
    if (action.type === 'handoff') {
      next.agents = { ...next.agents, agent: action.agent, model: null };
      // The batch being applied is a round: the turn's round once it is, the floor of maxIterations.
      next.limits = withinCounters(stricterLimits(next.limits, validateLimits(action.limits)), next, next.round + 1);
      if (action.system !== undefined) effects.push(append({ role: 'system', content: action.system }));
    } else if (action.type === 'change_model') next.agents = { ...next.agents, model: action.model };
  }
}

/**
 * Limits a handoff made stricter, never below what the turn has already used: a limit already
 * reached is reached (the next check stops the turn or forces its final answer), and the state
 * stays one `parseTurnState` accepts.
 */
function withinCounters(limits: TurnState['limits'], state: TurnState, round: number): TurnState['limits'] {
  const { budget } = limits;
  const floor = (max: number | undefined, used: number): number | undefined =>
    max === undefined ? undefined : Math.max(max, used);
  const modelCalls = floor(budget.maxModelCalls, state.usage.modelCalls);
  const toolCalls = floor(budget.maxToolCalls, state.usage.toolCalls);
  return validateLimits({
    ...limits,
    maxIterations: Math.max(limits.maxIterations, round),
    maxOutputRepairs: Math.max(limits.maxOutputRepairs, state.repairs),
    loopRecoveries: Math.max(limits.loopRecoveries, state.recoveries),
    loopThreshold: limits.loopThreshold === 0 ? 0 : Math.max(limits.loopThreshold, state.repeats),
    budget: {
      ...budget,
      ...(modelCalls === undefined ? {} : { maxModelCalls: modelCalls }),
      ...(toolCalls === undefined ? {} : { maxToolCalls: toolCalls }),
    },
  });
}

/** The batch's results are in, some of them `transfer_task` calls: their child turns run before the batch is applied. */
function delegate(state: TurnState, agents: TurnAgents, results: readonly ToolResult[], effects: Effect[]): Step {
  const batch = liveBatch(state);
  const delegations: Delegation[] = [];
  const held: ToolResult[] = [];
  for (const result of results) {
    const action = result.action;
    if (isTransfer(result) && action?.type === 'transfer')
      delegations.push({ callId: result.callId, agent: action.agent, task: action.task, limits: action.limits });
    else held.push(result);
  }
  const next = draft(state);
  next.status = 'delegating';
  next.batch = { ...batch, held, parked: NONE, decisions: NO_DECISIONS };
  next.agents = { ...agents, delegations, child: null };
  return startChild(next, effects);
}

/**
 * Starts the child turn of the first delegation: its agent's limits, under what the parent's
 * budgets have left. A child that ends on its first step (no budget left) answers at once, and
 * the next delegation starts; with none left the batch is applied.
 */
function startChild(state: TurnState, effects: Effect[]): Step {
  const agents = liveAgents(state);
  const first = agents.delegations[0];
  if (first === undefined) {
    const batch = liveBatch(state);
    return applyBatch(state, inCallOrder(batch.calls, batch.held), effects);
  }
  const limits = childLimits(validateLimits(first.limits), state.limits, state.usage);
  const child = createTurn({ id: `${state.id}/${first.callId}`, limits, agent: first.agent });
  const [started, childEffects] = step(child, { type: 'start', input: first.task });
  const next = draft(state);
  next.agents = { ...agents, child: started };
  return childStepped(next, [started, childEffects], effects);
}

/** The child turn took a step: its effects go out wrapped; if it ended, its end is the call's result. */
function childStepped(state: TurnState, [child, childEffects]: Step, effects: Effect[] = []): Step {
  const agents = liveAgents(state);
  const running = agents.delegations[0] as Delegation;
  for (const effect of childEffects) effects.push(wrapChild(running, effect));
  const next = draft(state);
  if (!isTerminal(child)) {
    next.agents = { ...agents, child };
    return [next, effects];
  }
  next.usage = addUsage(state.usage, child.usage);
  next.agents = { ...agents, delegations: agents.delegations.slice(1), child: null };
  const batch = liveBatch(state);
  const call = batch.calls.find((c) => c.id === running.callId) as ToolCall;
  next.batch = { ...batch, held: [...batch.held, childResult(call, running.agent, child.outcome as Outcome)] };
  return startChild(next, effects);
}

function wrapChild(delegation: Delegation, effect: Effect): Effect {
  return { type: 'child', callId: delegation.callId, agent: delegation.agent, effect };
}

/** The `transfer_task` call's result: the child's final output, or its failure as an error result. */
function childResult(call: ToolCall, agent: string, outcome: Outcome): ToolResult {
  const base = { callId: call.id, name: call.name };
  switch (outcome.status) {
    case 'stopped':
      if (outcome.output !== null) return { ...base, output: outcome.output, isError: false };
      return {
        ...base,
        output: `The agent '${agent}' stopped without an answer (${outcome.stopReason}).`,
        isError: true,
        errorKind: outcome.stopReason === 'budget_exhausted' ? 'budget' : 'tool_error',
      };
    case 'failed':
      return { ...base, output: `The agent '${agent}' failed: ${outcome.error.message}`, isError: true, errorKind: 'tool_error' };
    case 'cancelled':
      return {
        ...base,
        output: `cancelled: the agent '${agent}' was cancelled (${outcome.reason}).`,
        isError: true,
        errorKind: 'cancelled',
      };
  }
}

function addUsage(a: TurnUsage, b: TurnUsage): TurnUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    totalTokens: a.totalTokens + b.totalTokens,
    cost: a.cost + b.cost,
    modelCalls: a.modelCalls + b.modelCalls,
    toolCalls: a.toolCalls + b.toolCalls,
  };
}

/**
 * The child turn running, if any, is cancelled with the parent (`reason`): its effects, wrapped,
 * and the parent with the child's usage added and no delegations left. The `transfer_task` calls
 * then have no result, so whoever closes the batch gives them one.
 */
function endChild(state: TurnState, reason: string, effects: Effect[], finished: readonly ToolResult[] = NONE): TurnState {
  const agents = state.agents;
  if (agents === null || agents.delegations.length === 0) return state;
  const next = draft(state);
  const running = agents.delegations[0] as Delegation;
  if (agents.child !== null) {
    const [child, childEffects] = isTerminal(agents.child) ? [agents.child, []] : cancel(agents.child, reason, finished);
    for (const effect of childEffects) effects.push(wrapChild(running, effect));
    next.usage = addUsage(state.usage, child.usage);
  }
  next.agents = { ...agents, delegations: NONE, child: null };
  return next;
}

function liveAgents(state: TurnState): TurnAgents {
  if (state.agents === null) throw new Error(`the state is ${state.status} but has no agents`);
  return state.agents;
}

function liveChild(state: TurnState): { callId: string; state: TurnState } {
  const agents = liveAgents(state);
  const first = agents.delegations[0];
  if (first === undefined || agents.child === null) throw new Error('the state is delegating but no child turn runs');
  return { callId: first.callId, state: agents.child };
}

/** An effect with the active agent named, in a multi-agent turn. */
function withAgent<E extends Extract<Effect, { type: 'call_llm' | 'dispatch_tools' | 'execute_approved' }>>(
  state: TurnState,
  effect: E,
): E {
  return state.agents === null ? effect : { ...effect, agent: state.agents.agent };
}

// ---------------------------------------------------------------------------------------------
// awaiting_approval

function approvalsDecided(
  state: TurnState,
  batch: TurnBatch,
  decisions: ReadonlyArray<readonly [string, ApprovalDecision | null]>,
): Step {
  const { decided, ignoredIds } = takeDecisions(batch, decisions);
  const effects: Effect[] =
    ignoredIds.length > 0 ? [ignoredNotice('not a valid decision for a parked call still undecided', ignoredIds)] : [];
  const next = draft(state);
  next.batch = { ...batch, decisions: decided };
  if (batch.parked.some((p) => !Object.hasOwn(decided, p.call.id))) return [next, effects];
  return settleApprovals(next, effects);
}

/**
 * Which decisions of an `approvals_decided` event a parked batch accepts: a valid decision for a
 * parked call still undecided, the first per call. The rest are ignored (and named).
 */
function takeDecisions(
  batch: TurnBatch,
  decisions: ReadonlyArray<readonly [string, ApprovalDecision | null]>,
): { decided: Record<string, ApprovalDecision>; taken: TakenDecision[]; ignoredIds: string[] } {
  const parked = new Map(batch.parked.map((p) => [p.call.id, p]));
  const decided: Record<string, ApprovalDecision> = { ...batch.decisions };
  const taken: TakenDecision[] = [];
  const ignoredIds: string[] = [];
  for (const [callId, decision] of decisions) {
    const call = parked.get(callId);
    if (decision === null || call === undefined || Object.hasOwn(decided, callId)) ignoredIds.push(callId);
    else {
      setOwn(decided, callId, decision);
      taken.push({ call: call.call, input: call.input ?? call.call.input, decision });
    }
  }
  return { decided, taken, ignoredIds };
}

function approvalExpired(state: TurnState, batch: TurnBatch, now: number | undefined): Step {
  const due = dueCalls(batch, now);
  if (due.length === 0) return ignored(state, `no parked call's approval is due at ${String(now)}`, []);
  const decisions: Record<string, ApprovalDecision> = { ...batch.decisions };
  for (const { call } of due) setOwn(decisions, call.id, EXPIRED);
  const next = draft(state);
  next.batch = { ...batch, decisions };
  if (batch.parked.some((p) => !Object.hasOwn(decisions, p.call.id))) return [next, []];
  return settleApprovals(next, []);
}

/** The undecided parked calls an `approval_expired` expires: all of them without `now`, else those due by `now`. */
function dueCalls(batch: TurnBatch, now: number | undefined): ParkedCall[] {
  return batch.parked.filter(
    (p) => !Object.hasOwn(batch.decisions, p.call.id) && (now === undefined || (p.expiresAt !== undefined && p.expiresAt <= now)),
  );
}

/**
 * When the next approval of a parked turn expires (epoch ms): the earliest `expiresAt` of its
 * undecided calls, or null when none has one (or the turn is not waiting). A durable interpreter
 * wakes the turn then and steps `approval_expired { now }`.
 */
export function approvalDeadline(state: TurnState): number | null {
  if (state.status === 'delegating' && state.agents?.child != null) return approvalDeadline(state.agents.child);
  if (state.status !== 'awaiting_approval' || state.batch === null) return null;
  let earliest: number | null = null;
  for (const p of undecided(state))
    if (p.expiresAt !== undefined && (earliest === null || p.expiresAt < earliest)) earliest = p.expiresAt;
  return earliest;
}

const EXPIRED: ApprovalDecision = Object.freeze({ type: 'reject', reason: 'approval expired' });

/**
 * The decisions `step(state, event)` takes: for `approvals_decided` while the turn waits, each
 * valid decision for a parked call still undecided (the first per call); for `approval_expired`,
 * a rejection (`expired: true`) of every call still undecided; for anything else, none. An
 * interpreter records exactly these (the dispatcher's audit record and an approve-and-remember
 * grant), after the step, so its records follow what core accepted.
 *
 * @example
 * const [next, effects] = step(state, event);
 * for (const taken of decisionsTaken(state, event)) dispatcher.recordDecision(taken.call, taken.expired ? { type: 'expired' } : taken.decision);
 */
export function decisionsTaken(state: TurnState, event: unknown): TakenDecision[] {
  try {
    // A parent waiting on a child passes decisions down to it (see `transition`, delegating).
    if (state.status === 'delegating' && state.agents?.child != null) return decisionsTaken(state.agents.child, event);
    if (state.status !== 'awaiting_approval' || state.batch === null) return [];
    const parsed = readEvent(event);
    if (parsed.type === 'approvals_decided') return takeDecisions(state.batch, parsed.decisions).taken;
    if (parsed.type !== 'approval_expired') return [];
    return dueCalls(state.batch, parsed.now).map((p) => ({
      call: p.call,
      input: p.input ?? p.call.input,
      decision: EXPIRED,
      expired: true as const,
    }));
  } catch {
    return [];
  }
}

/** Every parked call has a decision: run the approved ones, or apply the batch if none was approved. */
function settleApprovals(state: TurnState, effects: Effect[]): Step {
  const approved = approvedCalls(liveBatch(state));
  if (approved.length === 0) {
    const [next, applied] = applyBatchAfterApproval(state, []);
    return [next, [...effects, ...applied]];
  }
  const next = draft(state);
  next.status = 'executing_approved';
  return [
    next,
    [...effects, { type: 'persist', checkpoint: 'dispatching' }, withAgent(state, { type: 'execute_approved', calls: approved })],
  ];
}

/** The parked calls a person approved, in parked order, with the input they parked with: what `execute_approved` runs. */
function approvedCalls(batch: TurnBatch): ToolCall[] {
  return batch.parked
    .filter((p) => Object.hasOwn(batch.decisions, p.call.id) && batch.decisions[p.call.id]?.type === 'approve')
    .map((p) => {
      // The call keeps its identity (id, originalId); its input is the one the person approved.
      const { inputError: _raw, ...call } = p.call;
      return { ...call, input: p.input ?? p.call.input };
    });
}

// ---------------------------------------------------------------------------------------------
// executing_approved

function approvedToolsCompleted(state: TurnState, batch: TurnBatch, results: readonly ToolResult[]): Step {
  const mismatch = compareIds(
    approvedCalls(batch).map((c) => c.id),
    results.map((r) => r.callId),
  );
  if (mismatch !== null) return incompleteBatch(state, mismatch);
  return applyBatchAfterApproval(state, results);
}

/** Held results, denials for rejected calls and the approved calls' results, merged in call order. */
function applyBatchAfterApproval(state: TurnState, executed: readonly ToolResult[]): Step {
  const batch = liveBatch(state);
  return applyBatch(state, inCallOrder(batch.calls, [...batch.held, ...denials(batch), ...executed]));
}

function denials(batch: TurnBatch): ToolResult[] {
  const out: ToolResult[] = [];
  for (const { call } of batch.parked) {
    const decision = Object.hasOwn(batch.decisions, call.id) ? batch.decisions[call.id] : undefined;
    if (decision?.type !== 'reject') continue;
    out.push(synthetic(call, rejectionText(decision.reason), 'denied'));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// steering and finalizing

function compacted(state: TurnState): Step {
  const budget = state.limits.budget;
  if (budget.maxModelCalls !== undefined && !below(state.usage.modelCalls, budget.maxModelCalls))
    return finish(state, stopped('budget_exhausted', null), []);
  if (budget.maxToolCalls !== undefined && !below(state.usage.toolCalls, budget.maxToolCalls))
    return finish(state, stopped('budget_exhausted', null), []);
  if (!below(state.round, state.limits.maxIterations)) {
    const effects = [emit('limit_reached', { limit: 'max_iterations', round: state.round })];
    const next = draft(state);
    next.forced = 'max_iterations';
    next.nextModel = null;
    return callModel(next, true, effects);
  }
  return callModel(state, false, [emit('iteration', { iteration: state.round + 1 })]);
}

function outputRejected(state: TurnState, reason: string): Step {
  if (!below(state.repairs, state.limits.maxOutputRepairs)) {
    return finish(
      state,
      failure('output_invalid', `The final output was rejected and no repairs are left: ${reason}`, { reason }),
      [],
    );
  }
  const next = draft(state);
  next.repairs = state.repairs + 1;
  next.candidate = null;
  return callModel(next, state.forced !== null, [append({ role: 'user', content: reason })]);
}

// ---------------------------------------------------------------------------------------------
// shared moves

/** Issue a model call, unless it would exceed `maxModelCalls`: then stop with `budget_exhausted`. */
function callModel(state: TurnState, final: boolean, effects: Effect[]): Step {
  const max = state.limits.budget.maxModelCalls;
  if (max !== undefined && !below(state.usage.modelCalls, max)) return finish(state, stopped('budget_exhausted', null), effects);
  const iteration = state.round + 1;
  // The one-shot override first, then the model `change_model` chose for the rest of the turn.
  const model = (final ? null : state.nextModel) ?? state.agents?.model ?? null;
  const request: CallLlmRequest = model !== null ? { iteration, final, modelOverride: model } : { iteration, final };
  const next = draft(state);
  next.status = 'calling_model';
  next.usage = withUsage(state.usage, { modelCalls: state.usage.modelCalls + 1 });
  next.nextModel = null;
  next.candidate = null;
  next.lastRequest = request;
  effects.push(withAgent(state, { type: 'call_llm', request }));
  return [next, effects];
}

/** Cancels the turn; `finished` are results of the batch in flight that a resume knows of (they are kept). */
function cancel(state: TurnState, reason: string, finished: readonly ToolResult[] = NONE): Step {
  const effects: Effect[] = [];
  // While a child runs, the results a resume knows of are the child's (its batch is the one in flight).
  const delegating = state.status === 'delegating';
  const ended = endChild(state, reason, effects, delegating ? finished : NONE);
  effects.push(
    ...closeOpenCalls(
      ended,
      'cancelled: the turn was cancelled before this call finished.',
      'cancelled',
      delegating ? NONE : finished,
    ),
  );
  return finish(clearBatch(ended), { status: 'cancelled', reason }, effects);
}

function unexpected(state: TurnState, eventType: string, problem: string): Step {
  const effects: Effect[] = [];
  state = endChild(state, 'the parent turn failed on an unexpected event', effects);
  effects.push(...closeOpenCalls(state, 'not executed: the turn failed on an unexpected event.', 'not_executed'));
  const error = failure('unexpected_event', `The turn received an event it cannot handle: ${problem}.`, {
    status: state.status,
    event: eventType,
  });
  return finish(clearBatch(state), error, effects);
}

function ignored(state: TurnState, reason: string, callIds: readonly string[]): Step {
  return [state, [ignoredNotice(reason, callIds)]];
}

function ignoredNotice(reason: string, callIds: readonly string[]): Effect {
  return emit('ignored_event', { reason, callIds: [...callIds] });
}

/**
 * One result for every call of the batch in flight that has none yet: real held results and
 * denials are kept, everything else gets `text`. In call order.
 */
function closeOpenCalls(
  state: TurnState,
  text: string,
  errorKind: 'cancelled' | 'not_executed',
  finished: readonly ToolResult[] = NONE,
): Effect[] {
  const batch = state.batch;
  if (batch === null) return [];
  // Held results and denials are empty until the batch parks; they win over a `finished` one.
  const byId = new Map([...finished, ...batch.held, ...denials(batch)].map((r) => [r.callId, r]));
  const effects = batch.calls.map((call) => appendResult(byId.get(call.id) ?? synthetic(call, text, errorKind)));
  for (const result of batch.notExecuted) effects.push(appendResult(result));
  return effects;
}

/** A state one step is making, which it fills in before returning it; never the step's input. */
type Draft = Mutable<TurnState> & { readonly [DRAFT]: true };
declare const DRAFT: unique symbol;

/**
 * A fresh copy of `state` for the step to change field by field. Every field is listed so V8 sees
 * one object shape, and the step's changes are plain stores into it (an object of changes per
 * call site, read field by field, was the reducer's largest cost).
 */
function draft(state: TurnState): Draft {
  return {
    version: state.version,
    id: state.id,
    status: state.status,
    limits: state.limits,
    round: state.round,
    usage: state.usage,
    forced: state.forced,
    batch: state.batch,
    lastBatch: state.lastBatch,
    repeats: state.repeats,
    repairs: state.repairs,
    recoveries: state.recoveries,
    candidate: state.candidate,
    nextModel: state.nextModel,
    lastRequest: state.lastRequest,
    outcome: state.outcome,
    callIds: state.callIds,
    agents: state.agents,
  } as Draft;
}

/** `state` with the usage of a model reply added. */
function usedState(state: TurnState, usage: TurnUsage): Draft {
  const next = draft(state);
  next.usage = usage;
  return next;
}

function withUsage(usage: TurnUsage, changes: Partial<Mutable<TurnUsage>>): TurnUsage {
  return {
    inputTokens: changes.inputTokens ?? usage.inputTokens,
    outputTokens: changes.outputTokens ?? usage.outputTokens,
    totalTokens: changes.totalTokens ?? usage.totalTokens,
    cost: changes.cost ?? usage.cost,
    modelCalls: changes.modelCalls ?? usage.modelCalls,
    toolCalls: changes.toolCalls ?? usage.toolCalls,
  };
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function clearBatch(state: TurnState): Draft {
  const next = draft(state);
  next.batch = null;
  return next;
}

function finish(state: TurnState, outcome: Outcome, effects: Effect[]): Step {
  const next = draft(state);
  next.status = outcome.status;
  next.outcome = outcome;
  next.candidate = null;
  effects.push({ type: 'done', outcome });
  return [next, effects];
}

function internalError(state: TurnState, error: unknown): Step {
  const message = errorMessage(error);
  const outcome: Outcome = failure(
    'internal_error',
    `turnkit hit an internal error: ${message}. Please report it with the event that caused it.`,
  );
  try {
    const effects: Effect[] = [];
    const ended = endChild(state, 'the parent turn failed on an internal error', effects);
    effects.push(...closeOpenCalls(ended, 'not executed: the turn failed on an internal error.', 'not_executed'));
    const next = clearBatch(ended);
    next.status = 'failed';
    next.outcome = outcome;
    next.candidate = null;
    return [next, [...effects, { type: 'done', outcome }]];
  } catch {
    // The state itself is unusable: answer with a fresh failed turn rather than throw.
    const fresh = createTurn({ id: 'unknown' });
    const next = draft(fresh);
    next.status = 'failed';
    next.outcome = outcome;
    return [next, [{ type: 'done', outcome }]];
  }
}

// ---------------------------------------------------------------------------------------------
// resume

/**
 * Continues a persisted state after a restart: the state and effects an interpreter continues
 * with, for every status. Two kinds of interpreter ask:
 *
 * - One that keeps no journal (the default): a call of the batch in flight without a result in
 *   `completed` gets a synthesised `interrupted` result; tools are never run again.
 * - A durable one (`{ durable: true }`, such as a store's worker) keeps a journal of tool calls and
 *   a log of what was appended and emitted: the batch in flight is issued again as it stands
 *   (`dispatch_tools` with its calls, or `execute_approved` with the approved calls and the input
 *   each parked with), and its journal answers the calls it holds; a parked turn re-emits nothing
 *   (its log has the notice). `retryWaited: true` says a retry's wait was already spent elsewhere
 *   (a store keeps the time in its database), so the re-issued model call has no `delayMs`.
 *
 * `cancel` (a reason) is a cancel that arrived while the turn was stored: it comes first, as
 * `step` of `{ type: 'cancel' }`, except that the `completed` results of the batch in flight are
 * kept (only the calls without one get `cancelled: …`). A `ready` turn is started (with `input`, if given) when the
 * interpreter is durable or gives an input; otherwise it is handed back as it is.
 *
 * @example
 * const [state, effects] = resume(parseTurnState(saved), { durable: true, cancel: waitingCancel ?? undefined });
 */
export function resume(state: TurnState, options: readonly ToolResult[] | ResumeOptions = []): Step {
  const {
    completed = NONE,
    durable = false,
    cancel: cancelled,
    retryWaited = false,
    input,
  } = Array.isArray(options) ? { completed: options as readonly ToolResult[] } : (options as ResumeOptions);
  try {
    if (isTerminal(state)) return [state, []];
    // A result a call reported before the restart is kept: a tool that ran is never said not to have.
    if (cancelled !== undefined) return cancel(state, cancelled, completed);
    switch (state.status) {
      case 'ready':
        return durable || input !== undefined ? start(state, input) : [state, []];
      case 'calling_model': {
        if (state.lastRequest === null) return [state, []];
        // Re-issuing counts as a call, so it too must fit maxModelCalls.
        const max = state.limits.budget.maxModelCalls;
        if (max !== undefined && !below(state.usage.modelCalls, max)) return finish(state, stopped('budget_exhausted', null), []);
        const next = draft(state);
        next.usage = withUsage(state.usage, { modelCalls: state.usage.modelCalls + 1 });
        const { delayMs: _spent, ...undelayed } = state.lastRequest;
        const request = retryWaited ? undelayed : state.lastRequest;
        return [next, [withAgent(state, { type: 'call_llm', request })]];
      }
      case 'dispatching': {
        const { calls } = liveBatch(state);
        if (durable) return [state, [withAgent(state, { type: 'dispatch_tools', calls })]];
        return applyBatch(state, inCallOrder(calls, withInterrupted(calls, completed)));
      }
      case 'awaiting_approval':
        if (durable) return [state, []];
        return [state, [emit('awaiting_approval', { pending: liveBatch(state).parked as unknown as JsonValue })]];
      case 'executing_approved': {
        const approved = approvedCalls(liveBatch(state));
        if (durable) return [state, [withAgent(state, { type: 'execute_approved', calls: approved })]];
        return applyBatchAfterApproval(state, withInterrupted(approved, completed));
      }
      case 'delegating': {
        // The child turn goes on where it was (the batch in flight is the child's, so `completed` is too).
        const child = liveChild(state);
        const childOptions: ResumeOptions = { completed, durable, retryWaited };
        return childStepped(state, resume(child.state, childOptions));
      }
      case 'steering':
        return [state, [{ type: 'compact', info: { round: state.round, usage: state.usage } }]];
      case 'finalizing':
        return [state, [{ type: 'check_output', candidate: state.candidate ?? '' }]];
      case 'stopped':
      case 'failed':
      case 'cancelled':
        return [state, []];
      default:
        return assertNever(state.status);
    }
  } catch (error) {
    return internalError(state, error);
  }
}

function withInterrupted(calls: readonly ToolCall[], completed: readonly ToolResult[]): ToolResult[] {
  const byId = new Map<string, ToolResult>();
  for (const result of completed) if (!byId.has(result.callId)) byId.set(result.callId, result);
  return calls.map(
    (call) =>
      byId.get(call.id) ??
      synthetic(call, 'interrupted: the turn restarted before this call reported a result; it was not run again.', 'interrupted'),
  );
}

// ---------------------------------------------------------------------------------------------
// small constructors

function append(message: Message): Effect {
  return { type: 'append', message };
}

function appendResult(result: ToolResult): Effect {
  return { type: 'append', message: { role: 'tool', result } };
}

function emit(name: NoticeName, data: JsonValue): Effect {
  return { type: 'emit', notice: { name, data } };
}

/** The kinds of the error results core writes itself (a subset of @turnkit/dispatch's `ToolErrorKind`). */
type SyntheticKind = 'budget' | 'not_executed' | 'cancelled' | 'denied' | 'interrupted';

function synthetic(call: ToolCall, output: string, errorKind: SyntheticKind): ToolResult {
  return { callId: call.id, name: call.name, output, isError: true, errorKind };
}

function stopped(stopReason: StopReason, output: JsonValue): Outcome {
  return { status: 'stopped', stopReason, output };
}

function failure(kind: string, message: string, data?: JsonValue | IdMismatch): Outcome {
  const error: TurnError = data === undefined ? { kind, message } : { kind, message, data: data as JsonValue };
  return { status: 'failed', error };
}

/** Sets an own property even for keys such as `__proto__` (call ids come from a model). */
function setOwn<T>(target: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

function assertNever(value: never): never {
  throw new Error(`unhandled case ${JSON.stringify(value)}`);
}

export type { ForcedReason };
