// Reading a persisted turn state back. A state on disk may be old, truncated or hand-edited:
// `parseTurnState` checks every field, migrates older versions to the current shape, and throws a
// `TurnStateError` that names the first bad field.

import { readDecision, readToolCall, readToolResult } from './events.js';
import { isJsonValue } from './json.js';
import { validateLimits } from './limits.js';
import type { ApprovalDecision, JsonValue, Outcome, ParkedCall, TurnState, TurnStatus } from './types.js';

/** Bumped on any change to the shape of `TurnState`; `parseTurnState` migrates older versions. */
export const TURN_STATE_VERSION = 1;

export class TurnStateError extends Error {
  /** The path of the first bad field, such as `usage.modelCalls`. */
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.name = 'TurnStateError';
    this.field = field;
  }
}

const STATUSES: readonly TurnStatus[] = ['ready', 'calling_model', 'dispatching', 'awaiting_approval', 'steering', 'finalizing', 'stopped', 'failed', 'cancelled'];
const STOP_REASONS = ['completed', 'max_iterations', 'loop_detected', 'budget_exhausted', 'hook_stopped'];

/**
 * Migrations from version N to N + 1, applied in order. Version 1 is the first released shape, so
 * the table is empty; a future shape change adds its step here and bumps TURN_STATE_VERSION.
 */
const MIGRATIONS: ReadonlyArray<(old: Record<string, unknown>) => Record<string, unknown>> = [];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function bad(field: string, message: string): never {
  throw new TurnStateError(field, `Invalid turn state: '${field}' ${message}.`);
}

function nat(obj: Obj, key: string, path = key): number {
  const v = obj[key];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) bad(path, `must be a whole number >= 0, got ${JSON.stringify(v) ?? 'nothing'}`);
  return v;
}

function nullableString(obj: Obj, key: string): string | null {
  const v = obj[key];
  if (v !== null && typeof v !== 'string') bad(key, 'must be a string or null');
  return v;
}

function array(obj: Obj, key: string): unknown[] {
  const v = obj[key];
  if (!Array.isArray(v)) bad(key, 'must be an array');
  return v;
}

function wrap<T>(field: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof TurnStateError) throw error;
    return bad(field, `is invalid: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * Validates a persisted state (an object or its JSON text), migrating older versions.
 *
 * @example
 * const state = parseTurnState(await readFile('turn.json', 'utf8'));
 */
export function parseTurnState(input: unknown): TurnState {
  let value = input;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value) as unknown;
    } catch (error) {
      bad('(root)', `is not JSON: ${(error as Error).message}`);
    }
  }
  if (!isObj(value)) bad('(root)', 'must be an object');
  let obj: Obj = value;
  const version = obj.version;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) bad('version', 'must be a whole number >= 1');
  if (version > TURN_STATE_VERSION) {
    bad('version', `is ${version}, written by a newer turnkit (this one reads up to ${TURN_STATE_VERSION}); upgrade @turnkit/core`);
  }
  for (let v = version; v < TURN_STATE_VERSION; v++) obj = { ...(MIGRATIONS[v - 1] as (o: Obj) => Obj)(obj), version: v + 1 };

  const id = obj.id;
  if (typeof id !== 'string' || id.length === 0) bad('id', 'must be a non-empty string');
  const status = obj.status as TurnStatus;
  if (!STATUSES.includes(status)) bad('status', `must be one of ${STATUSES.join(', ')}`);
  if (!isObj(obj.limits)) bad('limits', 'must be an object');
  const limits = wrap('limits', () => validateLimits(obj.limits as never));
  const round = nat(obj, 'round');
  if (!isObj(obj.usage)) bad('usage', 'must be an object');
  const u = obj.usage;
  const usage = {
    inputTokens: nat(u, 'inputTokens', 'usage.inputTokens'),
    outputTokens: nat(u, 'outputTokens', 'usage.outputTokens'),
    totalTokens: nat(u, 'totalTokens', 'usage.totalTokens'),
    cost: typeof u.cost === 'number' && Number.isFinite(u.cost) && u.cost >= 0 ? u.cost : bad('usage.cost', 'must be a finite number >= 0'),
    modelCalls: nat(u, 'modelCalls', 'usage.modelCalls'),
    toolCalls: nat(u, 'toolCalls', 'usage.toolCalls'),
  };
  const forced = obj.forced;
  if (forced !== null && forced !== 'max_iterations' && forced !== 'loop_detected') bad('forced', "must be null, 'max_iterations' or 'loop_detected'");
  const pending = array(obj, 'pending').map((c, i) => wrap(`pending[${i}]`, () => readToolCall(c, `pending[${i}]`)));
  const held = array(obj, 'held').map((r, i) => wrap(`held[${i}]`, () => readToolResult(r, `held[${i}]`)));
  const parked = array(obj, 'parked').map((p, i): ParkedCall => {
    if (!isObj(p)) bad(`parked[${i}]`, 'must be an object with a call');
    const call = wrap(`parked[${i}].call`, () => readToolCall(p.call, `parked[${i}].call`));
    if (p.reason !== undefined && typeof p.reason !== 'string') bad(`parked[${i}].reason`, 'must be a string');
    return p.reason === undefined ? { call } : { call, reason: p.reason };
  });
  if (!isObj(obj.decisions)) bad('decisions', 'must be an object keyed by call id');
  const decisions: Record<string, ApprovalDecision> = {};
  for (const [callId, d] of Object.entries(obj.decisions)) {
    const decision = readDecision(d);
    if (decision === null) bad(`decisions.${callId}`, "must be { type: 'approve' } or { type: 'reject', reason? }");
    Object.defineProperty(decisions, callId, { value: decision, enumerable: true, writable: true, configurable: true });
  }
  let executing: string[] | null = null;
  if (obj.executing !== null) {
    const list = array(obj, 'executing');
    if (list.some((x) => typeof x !== 'string')) bad('executing', 'must be null or an array of call ids');
    executing = list as string[];
  }
  const seenCallIds = array(obj, 'seenCallIds');
  if (seenCallIds.some((x) => typeof x !== 'string')) bad('seenCallIds', 'must be an array of call ids');
  const lastRequest = readRequest(obj.lastRequest);
  const outcome = readOutcome(obj.outcome);
  const terminal = status === 'stopped' || status === 'failed' || status === 'cancelled';
  if (terminal !== (outcome !== null)) bad('outcome', terminal ? `must be set when the status is ${status}` : `must be null while the status is ${status}`);
  if (outcome !== null && outcome.status !== status) bad('outcome.status', `must equal the state's status '${status}'`);

  return {
    version: TURN_STATE_VERSION,
    id,
    status,
    limits,
    round,
    usage,
    forced,
    pending,
    held,
    parked,
    decisions,
    executing,
    seenCallIds: seenCallIds as string[],
    lastBatch: readBatch(obj),
    repeats: nat(obj, 'repeats'),
    repairs: nat(obj, 'repairs'),
    candidate: nullableString(obj, 'candidate'),
    nextModel: nullableString(obj, 'nextModel'),
    lastRequest,
    outcome,
  };
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
  if (value.modelOverride === undefined) return { iteration, final: value.final };
  if (typeof value.modelOverride !== 'string') bad('lastRequest.modelOverride', 'must be a string');
  return { iteration, final: value.final, modelOverride: value.modelOverride };
}

function readOutcome(value: unknown): Outcome | null {
  if (value === null) return null;
  if (!isObj(value)) return bad('outcome', 'must be null or an object');
  switch (value.status) {
    case 'stopped':
      if (!STOP_REASONS.includes(value.stopReason as string)) bad('outcome.stopReason', `must be one of ${STOP_REASONS.join(', ')}`);
      if (!('output' in value) || !isJsonValue(value.output)) bad('outcome.output', 'must be a JSON value');
      return { status: 'stopped', stopReason: value.stopReason as never, output: value.output as never };
    case 'failed': {
      const e = value.error;
      if (!isObj(e) || typeof e.kind !== 'string' || typeof e.message !== 'string') bad('outcome.error', 'must have a string kind and message');
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
