// Reading events. Events come from interpreters, which relay models, tools and people: none of it
// is trusted. `readEvent` checks the shape of an event and returns a normalised copy holding only
// known fields, or says precisely what is wrong. It never throws on bad input.

import { copyJson, isJsonValue, MAX_JSON_DEPTH } from './json.js';
import { idProblem } from './ids.js';
import type {
  AgentAction,
  ApprovalDecision,
  CallRecord,
  FailableEffect,
  JsonValue,
  ModelResponse,
  ParkedCall,
  ToolCall,
  ToolResult,
  TurnError,
  TurnLimitsInput,
  Usage,
} from './types.js';

export type ParsedEvent =
  | { readonly type: 'start'; readonly input: string | undefined }
  /**
   * `response` is null when the reply is malformed (`problem` says where): a malformed reply is
   * still a reply, and fails the turn with `invalid_model_response` while a model call is out.
   */
  | { readonly type: 'model_responded'; readonly response: ModelResponse; readonly problem?: undefined }
  | { readonly type: 'model_responded'; readonly response: null; readonly problem: string }
  | { readonly type: 'model_failed'; readonly error: TurnError; readonly partialOutput: boolean }
  | { readonly type: 'tools_completed'; readonly results: readonly ToolResult[]; readonly records: readonly CallRecord[] }
  | {
      readonly type: 'tools_parked';
      readonly held: readonly ToolResult[];
      readonly parked: readonly ParkedCall[];
      readonly records: readonly CallRecord[];
      readonly at: number | undefined;
    }
  /** Each entry's decision is null when it is not a valid decision (the reducer ignores it). */
  | { readonly type: 'approvals_decided'; readonly decisions: ReadonlyArray<readonly [string, ApprovalDecision | null]> }
  | { readonly type: 'approval_expired'; readonly now: number | undefined }
  | {
      readonly type: 'approved_tools_completed';
      readonly results: readonly ToolResult[];
      readonly records: readonly CallRecord[];
    }
  | { readonly type: 'compacted' }
  | { readonly type: 'output_accepted'; readonly output: JsonValue }
  | { readonly type: 'output_rejected'; readonly reason: string }
  | { readonly type: 'cancel'; readonly reason: string | undefined }
  | { readonly type: 'cancel_batch'; readonly reason: string | undefined }
  | { readonly type: 'effect_failed'; readonly effect: FailableEffect; readonly error: TurnError }
  /** `event` is read by the child turn's own `step`. */
  | { readonly type: 'child'; readonly callId: string; readonly event: unknown };

export type ReadEvent = ParsedEvent | { readonly type: 'malformed'; readonly eventType: string; readonly problem: string };

// Not an Error: a malformed event is an answer, not a fault, and capturing a stack trace for each
// one made reading hostile input several times dearer.
class Bad {
  constructor(readonly message: string) {}
}

const FAILABLE: readonly FailableEffect[] = ['compact', 'check_output', 'dispatch_tools', 'execute_approved'];

const record = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

function need<T>(ok: boolean, value: T, problem: string): T {
  if (!ok) throw new Bad(problem);
  return value;
}

function str(value: unknown, what: string): string {
  return need(typeof value === 'string', value as string, `${what} must be a string`);
}

function optStr(value: unknown, what: string): string | undefined {
  return value === undefined ? undefined : str(value, what);
}

function list(value: unknown, what: string): readonly unknown[] {
  return need(Array.isArray(value), value as readonly unknown[], `${what} must be an array`);
}

/** A plain copy of a JSON value, read once (see copyJson): nothing of the original is read again. */
function json(value: unknown, what: string): JsonValue {
  const copy = copyJson(value);
  return need(
    copy !== undefined,
    copy as JsonValue,
    `${what} must be a JSON value (finite numbers, no cycles, at most ${MAX_JSON_DEPTH} levels deep)`,
  );
}

/** `what`, or its entry `index` when one is given: built only for a message, never on the common path. */
function at(what: string, index: number): string {
  return index < 0 ? what : `${what}[${index}]`;
}

/** A field that must be a string; the message names `what[index].field`. */
function field(value: unknown, what: string, index: number, name: string): string {
  if (typeof value === 'string') return value;
  throw new Bad(`${at(what, index)}.${name} must be a string`);
}

function optField(value: unknown, what: string, index: number, name: string): string | undefined {
  return value === undefined ? undefined : field(value, what, index, name);
}

/** A JSON field, copied (see `json`); the message names `what[index].field`. */
function jsonField(value: unknown, what: string, index: number, name: string): JsonValue {
  const copy = copyJson(value);
  if (copy !== undefined) return copy;
  return json(value, `${at(what, index)}.${name}`);
}

/** A tool call; `index` places it in a list (`what[index]`), -1 for none. */
export function readToolCall(value: unknown, what: string, index = -1): ToolCall {
  if (!record(value)) throw new Bad(`${at(what, index)} must be an object`);
  // A missing id is an empty one: core gives the call an id of its own (turn.ts, `identifyCalls`).
  const id = value.id === undefined || value.id === null ? '' : field(value.id, what, index, 'id');
  const name = field(value.name, what, index, 'name');
  const input = value.input === undefined ? null : jsonField(value.input, what, index, 'input');
  const inputError = optField(value.inputError, what, index, 'inputError');
  const originalId = optField(value.originalId, what, index, 'originalId');
  const call: ToolCall = inputError === undefined ? { id, name, input } : { id, name, input, inputError };
  return originalId === undefined ? call : { ...call, originalId };
}

const ERROR_KIND = /^[a-z][a-z0-9_]{0,63}$/;

/** An error kind: a short snake_case word (`timeout`, `rate_limited`), at most 64 characters. */
function readErrorKind(value: unknown, what: string): string {
  return need(
    typeof value === 'string' && ERROR_KIND.test(value),
    value as string,
    `${what} must be a short snake_case word like 'timeout' (lowercase letters, digits, '_'; at most 64 characters), got ${JSON.stringify(String(value)).slice(0, 80)}`,
  );
}

/** A tool result; `index` places it in a list (`what[index]`), -1 for none. */
export function readToolResult(value: unknown, what: string, index = -1): ToolResult {
  if (!record(value)) throw new Bad(`${at(what, index)} must be an object`);
  const callId = field(value.callId, what, index, 'callId');
  const name = field(value.name, what, index, 'name');
  const output = value.output === undefined ? null : jsonField(value.output, what, index, 'output');
  const isError = value.isError;
  if (typeof isError !== 'boolean') throw new Bad(`${at(what, index)}.isError must be a boolean`);
  const { errorKind, stop, modelOverride, action } = value;
  // The common result has none of the optional fields: built in one go.
  if (errorKind === undefined && stop === undefined && modelOverride === undefined && action === undefined)
    return { callId, name, output, isError };
  let result: ToolResult = { callId, name, output, isError };
  if (errorKind !== undefined) result = { ...result, errorKind: readErrorKind(errorKind, `${at(what, index)}.errorKind`) };
  if (stop !== undefined) {
    if (!record(stop)) throw new Bad(`${at(what, index)}.stop must be an object with a reason`);
    result = { ...result, stop: { reason: str(stop.reason, `${at(what, index)}.stop.reason`) } };
  }
  const override = optField(modelOverride, what, index, 'modelOverride');
  if (override !== undefined) result = { ...result, modelOverride: override };
  return action === undefined ? result : { ...result, action: readAction(action, `${at(what, index)}.action`) };
}

/** A runtime tool's `action` (types.ts, `AgentAction`); names follow the rule for ids. */
function readAction(value: unknown, what: string): AgentAction {
  if (!record(value)) throw new Bad(`${what} must be an object with a type`);
  const name = (key: string): string => {
    const text = str(value[key], `${what}.${key}`);
    const problem = idProblem(text);
    if (problem !== null) throw new Bad(`${what}.${key} ${problem}`);
    return text;
  };
  const limits = (): TurnLimitsInput => {
    const v = value.limits ?? {};
    if (!record(v) || !isJsonValue(v)) throw new Bad(`${what}.limits must be a JSON object of limits`);
    return copyJson(v) as TurnLimitsInput;
  };
  switch (value.type) {
    case 'transfer':
      return { type: 'transfer', agent: name('agent'), task: str(value.task, `${what}.task`), limits: limits() };
    case 'handoff': {
      const system = optStr(value.system, `${what}.system`);
      const base = { type: 'handoff' as const, agent: name('agent'), limits: limits() };
      return system === undefined ? base : { ...base, system };
    }
    case 'change_model':
      return { type: 'change_model', model: name('model') };
    default:
      throw new Bad(`${what}.type must be 'transfer', 'handoff' or 'change_model'`);
  }
}

function usageNumber(n: unknown, key: 'inputTokens' | 'outputTokens' | 'totalTokens' | 'cost'): number | undefined {
  if (n === undefined) return undefined;
  const whole = key === 'cost' ? Number.isFinite(n) : Number.isInteger(n);
  if (typeof n !== 'number' || !whole || n < 0) {
    throw new Bad(`response.usage.${key} must be ${key === 'cost' ? 'a finite number' : 'a whole number'} >= 0`);
  }
  return n;
}

function readUsage(value: unknown): Partial<Usage> | undefined {
  if (value === undefined) return undefined;
  if (!record(value)) throw new Bad('response.usage must be an object');
  const inputTokens = usageNumber(value.inputTokens, 'inputTokens');
  const outputTokens = usageNumber(value.outputTokens, 'outputTokens');
  const totalTokens = usageNumber(value.totalTokens, 'totalTokens');
  const cost = usageNumber(value.cost, 'cost');
  const usage: { -readonly [K in keyof Usage]?: number } = {};
  if (inputTokens !== undefined) usage.inputTokens = inputTokens;
  if (outputTokens !== undefined) usage.outputTokens = outputTokens;
  if (totalTokens !== undefined) usage.totalTokens = totalTokens;
  if (cost !== undefined) usage.cost = cost;
  return usage;
}

function readResponse(value: unknown): ModelResponse {
  if (!record(value)) throw new Bad('response must be an object');
  const text = value.text === undefined ? '' : str(value.text, 'response.text');
  const toolCalls = value.toolCalls === undefined ? [] : readList(value.toolCalls, 'response.toolCalls', readToolCall);
  const reasoning = optStr(value.reasoning, 'response.reasoning');
  const usage = readUsage(value.usage);
  const finishReason = optStr(value.finishReason, 'response.finishReason');
  const modelId = optStr(value.modelId, 'response.modelId');
  // Built once with only the fields present (no undefined values: the result must survive JSON).
  const response: { -readonly [K in keyof ModelResponse]: ModelResponse[K] } = { text, toolCalls };
  if (reasoning !== undefined) response.reasoning = reasoning;
  if (usage !== undefined) response.usage = usage;
  if (finishReason !== undefined) response.finishReason = finishReason;
  if (modelId !== undefined) response.modelId = modelId;
  return response;
}

function readError(value: unknown): TurnError {
  if (!record(value)) throw new Bad('error must be an object with kind and message');
  let error: TurnError = { kind: str(value.kind, 'error.kind'), message: str(value.message, 'error.message') };
  if (value.retryable !== undefined) {
    error = {
      ...error,
      retryable: need(typeof value.retryable === 'boolean', value.retryable as boolean, 'error.retryable must be a boolean'),
    };
  }
  return value.data === undefined ? error : { ...error, data: json(value.data, 'error.data') };
}

function readResults(value: unknown, what: string): ToolResult[] {
  return readList(value, what, readToolResult);
}

/** Each entry of a list read by `read`, which names a bad one `what[index]`. */
function readList<T>(value: unknown, what: string, read: (item: unknown, what: string, index: number) => T): T[] {
  const items = list(value, what);
  // Made at its final length: an array grown by push keeps spare room, and a turn keeps these lists.
  const out = new Array<T>(items.length);
  for (let i = 0; i < items.length; i++) out[i] = read(items[i], what, i);
  return out;
}

const isCount = (n: unknown, whole: boolean): n is number =>
  typeof n === 'number' && Number.isFinite(n) && n >= 0 && (!whole || Number.isInteger(n));

/** One audit record, or null when it is not one. */
function readRecord(value: unknown): CallRecord | null {
  if (!record(value)) return null;
  const { turnId, callId, tool, input, decision, source, outcome, durationMs, attempts, reason, context } = value;
  if (
    typeof turnId !== 'string' ||
    typeof callId !== 'string' ||
    typeof tool !== 'string' ||
    typeof decision !== 'string' ||
    typeof source !== 'string' ||
    typeof outcome !== 'string'
  )
    return null;
  if (!isCount(durationMs, false) || !isCount(attempts, true) || !isJsonValue(input)) return null;
  if (reason !== undefined && typeof reason !== 'string') return null;
  if (context !== undefined && !(record(context) && isJsonValue(context))) return null;
  const read = { turnId, callId, tool, input, decision, source, outcome, durationMs, attempts } as CallRecord;
  if (reason === undefined && context === undefined) return read;
  return {
    ...read,
    ...(reason === undefined ? {} : { reason }),
    ...(context === undefined ? {} : { context: context as CallRecord['context'] & object }),
  };
}

/**
 * Audit records are read leniently: they describe the results, they are not results, so a
 * malformed one is dropped (never fatal, never a lost result). Missing: none.
 */
function readRecords(value: unknown): CallRecord[] {
  if (!Array.isArray(value)) return [];
  return value.map(readRecord).filter((r): r is CallRecord => r !== null);
}

/** Decisions are read leniently: a malformed decision is ignored by the reducer, not fatal. */
function readDecisions(value: unknown): Array<[string, ApprovalDecision | null]> {
  if (!record(value)) throw new Bad('decisions must be an object keyed by call id');
  return Object.entries(value).map(([callId, decision]) => [callId, readDecision(decision)]);
}

/** A decision, or null when it is not a valid one. */
export function readDecision(value: unknown): ApprovalDecision | null {
  if (!record(value)) return null;
  if (value.type === 'approve') {
    if (value.remember === undefined) return { type: 'approve' };
    return value.remember === 'session' || value.remember === 'tool' ? { type: 'approve', remember: value.remember } : null;
  }
  if (value.type === 'reject') {
    if (value.reason === undefined) return { type: 'reject' };
    return typeof value.reason === 'string' ? { type: 'reject', reason: value.reason } : null;
  }
  return null;
}

export function readEvent(event: unknown): ReadEvent {
  if (!record(event))
    return { type: 'malformed', eventType: typeof event, problem: 'an event must be an object with a string `type`' };
  const type = event.type;
  if (typeof type !== 'string')
    return { type: 'malformed', eventType: typeof type, problem: 'an event must have a string `type`' };
  try {
    switch (type) {
      case 'start':
        return { type, input: optStr(event.input, 'start.input') };
      case 'model_responded':
        try {
          return { type, response: readResponse(event.response) };
        } catch (error) {
          if (error instanceof Bad) return { type, response: null, problem: error.message };
          throw error;
        }
      case 'model_failed': {
        const partial = event.partialOutput ?? false;
        return {
          type,
          error: readError(event.error),
          partialOutput: need(typeof partial === 'boolean', partial as boolean, 'model_failed.partialOutput must be a boolean'),
        };
      }
      case 'tools_completed':
      case 'approved_tools_completed':
        return { type, results: readResults(event.results, 'results'), records: readRecords(event.records) };
      case 'tools_parked': {
        const held = readResults(event.held ?? [], 'held');
        const parked = list(event.parked, 'parked').map((p, i): ParkedCall => {
          if (!record(p)) throw new Bad(`parked[${i}] must be an object with a call`);
          const call = readToolCall(p.call, `parked[${i}].call`);
          // Without an input the call parks with the input it was sent with (core looks it up).
          const input = p.input === undefined ? undefined : json(p.input, `parked[${i}].input`);
          const reason = optStr(p.reason, `parked[${i}].reason`);
          const expiresAfterMs = optTime(p.expiresAfterMs, `parked[${i}].expiresAfterMs`);
          return {
            call,
            ...(input === undefined ? {} : { input }),
            ...(reason === undefined ? {} : { reason }),
            ...(expiresAfterMs === undefined ? {} : { expiresAfterMs }),
          };
        });
        return { type, held, parked, records: readRecords(event.records), at: optTime(event.at, 'tools_parked.at') };
      }
      case 'approvals_decided':
        return { type, decisions: readDecisions(event.decisions) };
      case 'approval_expired':
        return { type, now: optTime(event.now, 'approval_expired.now') };
      case 'compacted':
        return { type };
      case 'output_accepted':
        if (!('output' in event)) throw new Bad('output_accepted.output is missing');
        return { type, output: json(event.output, 'output_accepted.output') };
      case 'output_rejected':
        return { type, reason: str(event.reason, 'output_rejected.reason') };
      case 'cancel':
        return { type, reason: optStr(event.reason, 'cancel.reason') };
      case 'cancel_batch':
        return { type, reason: optStr(event.reason, 'cancel_batch.reason') };
      case 'child':
        if (!('event' in event)) throw new Bad('child.event is missing');
        return { type, callId: str(event.callId, 'child.callId'), event: event.event };
      case 'effect_failed': {
        const effect = event.effect;
        if (typeof effect !== 'string' || !(FAILABLE as readonly string[]).includes(effect)) {
          throw new Bad(`effect_failed.effect must be one of ${FAILABLE.map((e) => `'${e}'`).join(', ')}`);
        }
        return { type, effect: effect as FailableEffect, error: readError(event.error) };
      }
      default:
        return { type: 'malformed', eventType: type, problem: `'${type}' is not a turn event type` };
    }
  } catch (error) {
    if (error instanceof Bad) return { type: 'malformed', eventType: type, problem: error.message };
    throw error;
  }
}

/** An optional time or duration in whole milliseconds (0 to Number.MAX_SAFE_INTEGER). */
function optTime(value: unknown, what: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw new Bad(`${what} must be a whole number of milliseconds >= 0, got ${JSON.stringify(value) ?? String(value)}`);
  return value;
}
