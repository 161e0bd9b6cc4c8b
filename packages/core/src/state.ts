// Reading a persisted turn state back. A state on disk may be old, truncated or hand-edited:
// `parseTurnState` checks every field, migrates older versions to the current shape, and throws a
// `TurnStateError` that names the first bad field. Beyond the shape, the counters must agree with
// the state and its limits (see `checkCounters`): a state is data anyone could have edited, and a
// counter that disagrees could make a resumed turn run past every limit.

import { errorMessage } from './errors.js';
import { readDecision, readToolCall, readToolResult } from './events.js';
import { filterProblem } from './call-ids.js';
import { isJsonValue } from './json.js';
import { idProblem } from './ids.js';
import { LimitError, validateLimits } from './limits.js';
import { MIGRATIONS } from './migrate.js';
import { bad, isObj, type Obj, TurnStateError } from './state-error.js';
import { stateProblems } from './state-invariants.js';

export { TurnStateError };
import type {
  ApprovalDecision,
  JsonValue,
  Outcome,
  ParkedCall,
  ToolCall,
  TurnBatch,
  TurnLimits,
  CallIds,
  Delegation,
  TurnAgents,
  TurnState,
  TurnStatus,
  TurnUsage,
} from './types.js';

/** Bumped on any change to the shape of `TurnState`; `parseTurnState` migrates older versions. */
export const TURN_STATE_VERSION = 5;

/** Every status a turn can be in, in the order of the turn contract. */
export const TURN_STATUSES: readonly TurnStatus[] = [
  'ready',
  'calling_model',
  'dispatching',
  'awaiting_approval',
  'executing_approved',
  'delegating',
  'steering',
  'finalizing',
  'stopped',
  'failed',
  'cancelled',
];
/** The statuses with a tool batch in flight (`batch` set); every other status has `batch: null`. */
const BATCH_STATUSES: readonly TurnStatus[] = ['dispatching', 'awaiting_approval', 'executing_approved', 'delegating'];
/** Every field of a current state, in order; any other key is refused (it belongs to another shape). */
const STATE_KEYS = [
  'version',
  'id',
  'status',
  'limits',
  'round',
  'usage',
  'forced',
  'batch',
  'lastBatch',
  'repeats',
  'repairs',
  'recoveries',
  'candidate',
  'nextModel',
  'lastRequest',
  'outcome',
  'callIds',
  'agents',
] as const satisfies ReadonlyArray<keyof TurnState>;
const AGENTS_KEYS = ['agent', 'model', 'delegations', 'child'] as const satisfies ReadonlyArray<keyof TurnAgents>;
const DELEGATION_KEYS = ['callId', 'agent', 'task', 'limits'] as const satisfies ReadonlyArray<keyof Delegation>;
/** How deep a tree of child turns a saved state may hold (each child is a whole state). */
const MAX_CHILD_DEPTH = 8;
const BATCH_KEYS = ['calls', 'notExecuted', 'held', 'parked', 'decisions'] as const satisfies ReadonlyArray<keyof TurnBatch>;
const PARKED_KEYS = ['call', 'input', 'reason', 'expiresAfterMs', 'expiresAt'] as const satisfies ReadonlyArray<keyof ParkedCall>;
const STOP_REASONS = ['completed', 'max_iterations', 'loop_detected', 'budget_exhausted', 'hook_stopped'];

/** A key that is not part of the shape: most likely a field of another version, so nothing is guessed. */
function refuseUnknownKeys(obj: Obj, known: readonly string[], prefix: string, version = TURN_STATE_VERSION): void {
  for (const key of Object.keys(obj)) {
    if (!known.includes(key))
      bad(
        `${prefix}${key}`,
        `is not a field of a version ${version} state (its fields: ${known.join(', ')}); was the state edited, or its version changed by hand?`,
      );
  }
}

/** A whole number from 0 to Number.MAX_SAFE_INTEGER (past it, adding 1 may change nothing). */
function nat(obj: Obj, key: string, path = key): number {
  const v = obj[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    bad(path, `must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, got ${JSON.stringify(v) ?? 'nothing'}`);
  }
  return v;
}

function nullableString(obj: Obj, key: string): string | null {
  const v = obj[key];
  if (v !== null && typeof v !== 'string') bad(key, 'must be a string or null');
  return v;
}

function array(obj: Obj, key: string, path = key): unknown[] {
  const v = obj[key];
  if (!Array.isArray(v)) bad(path, 'must be an array');
  return v;
}

function wrap<T>(field: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof TurnStateError) throw error;
    return bad(field, `is invalid: ${errorMessage(error)}`);
  }
}

/**
 * Validates a persisted state (an object or its JSON text), migrating older versions.
 *
 * @example
 * const state = parseTurnState(await readFile('turn.json', 'utf8'));
 */
export function parseTurnState(input: unknown): TurnState {
  return parseState(input, 0);
}

function parseState(input: unknown, depth: number): TurnState {
  // One plain copy, read once (as JSON text would be): a getter or a Proxy in a state must not show
  // one value here and another to `step`. A text parses to a plain copy of its own.
  let copy: unknown;
  if (typeof input === 'string') {
    try {
      copy = JSON.parse(input) as unknown;
    } catch (error) {
      bad('(root)', `is not JSON: ${(error as Error).message}`);
    }
  } else {
    if (!isObj(input)) bad('(root)', 'must be an object');
    try {
      copy = JSON.parse(JSON.stringify(input)) as unknown;
    } catch (error) {
      bad('(root)', `cannot be read as JSON: ${errorMessage(error)}`);
    }
  }
  if (!isObj(copy)) bad('(root)', 'must be an object');
  let obj: Obj = copy;
  const version = obj.version;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) bad('version', 'must be a whole number >= 1');
  if (version > TURN_STATE_VERSION) {
    bad(
      'version',
      `is ${version}, written by a newer turnkit (this one reads up to ${TURN_STATE_VERSION}); upgrade @turnkit/core`,
    );
  }
  for (let v = version; v < TURN_STATE_VERSION; v++) obj = { ...(MIGRATIONS[v - 1] as (o: Obj) => Obj)(obj), version: v + 1 };
  refuseUnknownKeys(obj, STATE_KEYS, '');

  const id = obj.id;
  if (typeof id !== 'string' || id.length === 0) bad('id', 'must be a non-empty string');
  const status = obj.status as TurnStatus;
  if (!TURN_STATUSES.includes(status)) bad('status', `must be one of ${TURN_STATUSES.join(', ')}`);
  if (!isObj(obj.limits)) bad('limits', 'must be an object');
  const limits = readLimits(obj.limits);
  const round = nat(obj, 'round');
  if (!isObj(obj.usage)) bad('usage', 'must be an object');
  const u = obj.usage;
  const usage = {
    inputTokens: nat(u, 'inputTokens', 'usage.inputTokens'),
    outputTokens: nat(u, 'outputTokens', 'usage.outputTokens'),
    totalTokens: nat(u, 'totalTokens', 'usage.totalTokens'),
    cost:
      typeof u.cost === 'number' && Number.isFinite(u.cost) && u.cost >= 0
        ? u.cost
        : bad('usage.cost', 'must be a finite number >= 0'),
    modelCalls: nat(u, 'modelCalls', 'usage.modelCalls'),
    toolCalls: nat(u, 'toolCalls', 'usage.toolCalls'),
  };
  const forced = obj.forced;
  if (forced !== null && forced !== 'max_iterations' && forced !== 'loop_detected')
    bad('forced', "must be null, 'max_iterations' or 'loop_detected'");
  const batch = readTurnBatch(obj.batch, status);
  const lastRequest = readRequest(obj.lastRequest);
  const outcome = readOutcome(obj.outcome);
  const terminal = status === 'stopped' || status === 'failed' || status === 'cancelled';
  if (terminal !== (outcome !== null))
    bad('outcome', terminal ? `must be set when the status is ${status}` : `must be null while the status is ${status}`);
  if (outcome !== null && outcome.status !== status) bad('outcome.status', `must equal the state's status '${status}'`);

  const state: TurnState = {
    version: TURN_STATE_VERSION,
    id,
    status,
    limits,
    round,
    usage,
    forced,
    batch,
    lastBatch: readBatch(obj),
    repeats: nat(obj, 'repeats'),
    repairs: nat(obj, 'repairs'),
    recoveries: nat(obj, 'recoveries'),
    candidate: nullableString(obj, 'candidate'),
    nextModel: nullableString(obj, 'nextModel'),
    lastRequest,
    outcome,
    callIds: readCallIds(obj),
    agents: readAgents(obj.agents, depth),
  };
  const [problem] = stateProblems(state);
  if (problem !== undefined) bad(problem.field, problem.message);
  checkCounters(state, version);
  return state;
}

function readLimits(value: Obj): TurnLimits {
  try {
    return validateLimits(value as never);
  } catch (error) {
    if (error instanceof LimitError)
      bad(error.option === '' ? 'limits' : `limits.${error.option}`, `is invalid: ${error.message}`);
    return bad('limits', `is invalid: ${errorMessage(error)}`);
  }
}

/**
 * The batch in flight: set exactly in the statuses that have one, and consistent with itself (the
 * held results and parked calls answer the sent calls, decisions are for parked calls, and in
 * `executing_approved` every parked call is decided and one at least approved), so `step` never
 * meets a batch it could not have built.
 */
function readTurnBatch(value: unknown, status: TurnStatus): TurnBatch | null {
  if (!BATCH_STATUSES.includes(status)) {
    if (value !== null) bad('batch', `must be null while the status is ${status} (no tool batch is in flight)`);
    return null;
  }
  if (!isObj(value)) return bad('batch', `must be an object while the status is ${status}`);
  refuseUnknownKeys(value, BATCH_KEYS, 'batch.');
  const calls = array(value, 'calls', 'batch.calls').map((c, i) => readCall(c, `batch.calls[${i}]`));
  const results = (key: 'held' | 'notExecuted') =>
    array(value, key, `batch.${key}`).map((r, i) => wrap(`batch.${key}[${i}]`, () => readToolResult(r, `batch.${key}[${i}]`)));
  const notExecuted = results('notExecuted');
  const held = results('held');
  const parked = array(value, 'parked', 'batch.parked').map((p, i): ParkedCall => {
    if (!isObj(p)) bad(`batch.parked[${i}]`, 'must be an object with a call and the input that runs if approved');
    refuseUnknownKeys(p, PARKED_KEYS, `batch.parked[${i}].`);
    const call = readCall(p.call, `batch.parked[${i}].call`);
    if (!('input' in p) || !isJsonValue(p.input)) bad(`batch.parked[${i}].input`, 'must be the JSON input that runs if approved');
    if (p.reason !== undefined && typeof p.reason !== 'string') bad(`batch.parked[${i}].reason`, 'must be a string');
    const input = p.input as JsonValue;
    const times: { expiresAfterMs?: number; expiresAt?: number } = {};
    for (const key of ['expiresAfterMs', 'expiresAt'] as const) {
      if (p[key] === undefined) continue;
      times[key] = nat(p, key, `batch.parked[${i}].${key}`);
    }
    return { ...(p.reason === undefined ? { call, input } : { call, input, reason: p.reason }), ...times };
  });
  if (!isObj(value.decisions)) bad('batch.decisions', 'must be an object keyed by call id');
  const decisions: Record<string, ApprovalDecision> = {};
  for (const [callId, d] of Object.entries(value.decisions)) {
    const decision = readDecision(d);
    if (decision === null) bad(`batch.decisions.${callId}`, "must be { type: 'approve' } or { type: 'reject', reason? }");
    Object.defineProperty(decisions, callId, { value: decision, enumerable: true, writable: true, configurable: true });
  }

  return { calls, notExecuted, held, parked, decisions };
}

/** `agents`: null, or the active agent, its model, the delegations and the child turn (read as a state of its own). */
function readAgents(value: unknown, depth: number): TurnAgents | null {
  if (value === null) return null;
  if (!isObj(value)) return bad('agents', 'must be null or an object { agent, model, delegations, child }');
  refuseUnknownKeys(value, AGENTS_KEYS, 'agents.');
  const name = (v: unknown, path: string): string => {
    if (typeof v !== 'string' || idProblem(v) !== null) bad(path, "must be an agent's name (1 to 256 printable characters)");
    return v;
  };
  const agent = name(value.agent, 'agents.agent');
  const model = value.model;
  if (model !== null && (typeof model !== 'string' || idProblem(model) !== null))
    bad('agents.model', 'must be null or a model name (1 to 256 printable characters)');
  const delegations = array(value, 'delegations', 'agents.delegations').map((d, i): Delegation => {
    const path = `agents.delegations[${i}]`;
    if (!isObj(d)) return bad(path, 'must be an object { callId, agent, task, limits }');
    refuseUnknownKeys(d, DELEGATION_KEYS, `${path}.`);
    if (typeof d.task !== 'string') bad(`${path}.task`, 'must be a string');
    if (!isObj(d.limits)) bad(`${path}.limits`, 'must be an object of limits');
    readLimits(d.limits);
    return {
      callId: name(d.callId, `${path}.callId`),
      agent: name(d.agent, `${path}.agent`),
      task: d.task,
      limits: d.limits as never,
    };
  });
  if (value.child !== null && depth >= MAX_CHILD_DEPTH)
    bad('agents.child', `is nested more than ${MAX_CHILD_DEPTH} child turns deep`);
  const child = value.child === null ? null : wrap('agents.child', () => parseState(value.child, depth + 1));
  return { agent, model, delegations, child };
}

/** `callIds`: `{ count, filter }` (call-ids.ts). */
function readCallIds(obj: Obj): CallIds {
  const value = obj.callIds;
  if (!isObj(value)) bad('callIds', 'must be an object { count, filter }');
  refuseUnknownKeys(value, ['count', 'filter'], 'callIds.');
  const count = nat(value, 'count', 'callIds.count');
  const filter = value.filter;
  if (typeof filter !== 'string') bad('callIds.filter', 'must be a string');
  const problem = filterProblem(filter);
  if (problem !== null) bad('callIds.filter', problem);
  // Empty until the turn keeps a model's id (a turn whose calls all got derived ids has none).
  if (count === 0 && filter !== '') bad('callIds.filter', 'must be empty before the first call');
  return { count, filter };
}

/** A tool call whose id and name follow the rule for ids (ids.ts), as a model reply's must. */
function readCall(value: unknown, path: string): ToolCall {
  const call = wrap(path, () => readToolCall(value, path));
  for (const key of ['id', 'name'] as const) {
    const problem = idProblem(call[key]);
    if (problem !== null) bad(`${path}.${key}`, problem);
  }
  return call;
}

/**
 * The counters must be what `step` could have produced from this state's own limits. Terminal
 * states absorb every event, so their counters bound nothing and are not compared. `version` is the
 * version the state was written with: a version 1 state may hold a batch larger than
 * `maxCallsPerReply` and a tool-call count past its budget (neither was cut then).
 */
function checkCounters(state: TurnState, version: number): void {
  const { status, limits, usage, round, repairs, recoveries, repeats, batch } = state;
  if (status === 'stopped' || status === 'failed' || status === 'cancelled') return;

  if (round > limits.maxIterations) bad('round', `is ${round}, past limits.maxIterations (${limits.maxIterations})`);
  if (repairs > limits.maxOutputRepairs)
    bad('repairs', `is ${repairs}, past limits.maxOutputRepairs (${limits.maxOutputRepairs})`);
  if (recoveries > limits.loopRecoveries)
    bad('recoveries', `is ${recoveries}, past limits.loopRecoveries (${limits.loopRecoveries})`);
  if ((state.lastBatch === null) !== (repeats === 0))
    bad('repeats', state.lastBatch === null ? 'must be 0 when lastBatch is null' : 'must be at least 1 when lastBatch is set');
  if (limits.loopThreshold > 0 && repeats > limits.loopThreshold)
    bad('repeats', `is ${repeats}, past limits.loopThreshold (${limits.loopThreshold})`);
  const { maxModelCalls, maxToolCalls } = limits.budget;
  if (maxModelCalls !== undefined && usage.modelCalls > maxModelCalls)
    bad('usage.modelCalls', `is ${usage.modelCalls}, past limits.budget.maxModelCalls (${maxModelCalls})`);
  if (version >= 2 && maxToolCalls !== undefined && usage.toolCalls > maxToolCalls) {
    bad('usage.toolCalls', `is ${usage.toolCalls}, past limits.budget.maxToolCalls (${maxToolCalls})`);
  }

  // Lower bounds: every applied round came from one model reply and sent at least one call, every
  // repair and every loop recovery asked the model again, and the statuses below have a model call
  // issued for this round.
  const issuedThisRound = status === 'steering' || status === 'ready' ? 0 : 1;
  atLeast(usage, 'modelCalls', round + repairs + recoveries + issuedThisRound);
  atLeast(usage, 'toolCalls', round + (batch === null ? 0 : batch.calls.length));
  if (status === 'ready' && (round > 0 || usage.modelCalls > 0 || usage.toolCalls > 0 || repairs > 0 || recoveries > 0)) {
    bad(
      round > 0
        ? 'round'
        : usage.modelCalls > 0
          ? 'usage.modelCalls'
          : usage.toolCalls > 0
            ? 'usage.toolCalls'
            : repairs > 0
              ? 'repairs'
              : 'recoveries',
      'must be 0 before the turn starts',
    );
  }
  if (status === 'steering' && round === 0) bad('round', 'must be at least 1 after a tool round');
  if (status === 'calling_model') {
    if (state.lastRequest === null) bad('lastRequest', 'must be set while a model call is in flight');
    if (state.lastRequest.iteration !== round + 1)
      bad('lastRequest.iteration', `must be round + 1 (${round + 1}), got ${state.lastRequest.iteration}`);
    const attempt = state.lastRequest.attempt ?? 0;
    if (attempt > limits.maxModelRetries)
      bad('lastRequest.attempt', `is ${attempt}, past limits.maxModelRetries (${limits.maxModelRetries})`);
  }
  if (batch !== null) {
    if (state.forced !== null) bad('forced', `must be null while the status is ${status}`);
    if (version >= 2 && batch.calls.length > limits.maxCallsPerReply) {
      bad('batch.calls', `holds ${batch.calls.length} calls, past limits.maxCallsPerReply (${limits.maxCallsPerReply})`);
    }
  }
}

function atLeast(usage: TurnUsage, key: 'modelCalls' | 'toolCalls', min: number): void {
  if (usage[key] < min)
    bad(`usage.${key}`, `is ${usage[key]}, fewer than the ${min} the state's rounds, repairs and batch account for`);
}

function readBatch(obj: Obj): TurnState['lastBatch'] {
  if (obj.lastBatch === null) return null;
  return array(obj, 'lastBatch').map((c, i) => {
    if (!isObj(c) || typeof c.name !== 'string') bad(`lastBatch[${i}]`, 'must be an object with a string name and a JSON input');
    if (!('input' in c) || !isJsonValue(c.input)) bad(`lastBatch[${i}].input`, 'must be a JSON value');
    return { name: c.name, input: c.input as JsonValue };
  });
}

function readRequest(value: unknown): TurnState['lastRequest'] {
  if (value === null) return null;
  if (!isObj(value)) return bad('lastRequest', 'must be null or an object');
  const iteration = nat(value, 'iteration', 'lastRequest.iteration');
  if (typeof value.final !== 'boolean') bad('lastRequest.final', 'must be a boolean');
  let request: NonNullable<TurnState['lastRequest']> = { iteration, final: value.final };
  if (value.modelOverride !== undefined) {
    if (typeof value.modelOverride !== 'string') bad('lastRequest.modelOverride', 'must be a string');
    request = { ...request, modelOverride: value.modelOverride };
  }
  // A retry carries both its number (from 1) and its wait.
  if (value.attempt === undefined && value.delayMs === undefined) return request;
  const attempt = nat(value, 'attempt', 'lastRequest.attempt');
  if (attempt < 1) bad('lastRequest.attempt', 'must be at least 1 (the first retry)');
  return { ...request, attempt, delayMs: nat(value, 'delayMs', 'lastRequest.delayMs') };
}

function readOutcome(value: unknown): Outcome | null {
  if (value === null) return null;
  if (!isObj(value)) return bad('outcome', 'must be null or an object');
  switch (value.status) {
    case 'stopped':
      if (!STOP_REASONS.includes(value.stopReason as string))
        bad('outcome.stopReason', `must be one of ${STOP_REASONS.join(', ')}`);
      if (!('output' in value) || !isJsonValue(value.output)) bad('outcome.output', 'must be a JSON value');
      return { status: 'stopped', stopReason: value.stopReason as never, output: value.output as never };
    case 'failed': {
      const e = value.error;
      if (!isObj(e) || typeof e.kind !== 'string' || typeof e.message !== 'string')
        bad('outcome.error', 'must have a string kind and message');
      if (e.data !== undefined && !isJsonValue(e.data)) bad('outcome.error.data', 'must be a JSON value');
      if (e.retryable !== undefined && typeof e.retryable !== 'boolean') bad('outcome.error.retryable', 'must be a boolean');
      return { status: 'failed', error: e as never };
    }
    case 'cancelled':
      if (typeof value.reason !== 'string') bad('outcome.reason', 'must be a string');
      return { status: 'cancelled', reason: value.reason };
    default:
      return bad('outcome.status', "must be 'stopped', 'failed' or 'cancelled'");
  }
}
