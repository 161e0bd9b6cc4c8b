// Turn limits: defaults and validation. Invalid options throw a RangeError that names the option.
// Whole-number limits must be safe integers: past Number.MAX_SAFE_INTEGER adding 1 to a counter
// may leave it unchanged, so a counter could never reach its limit.

import type { TurnBudget, TurnLimits, TurnLimitsInput, Usage } from './types.js';

export const DEFAULT_LIMITS: TurnLimits = Object.freeze({
  maxIterations: 10,
  loopThreshold: 5,
  loopExemptTools: Object.freeze([]),
  maxOutputRepairs: 2,
  maxCallsPerReply: 32,
  maxModelRetries: 2,
  modelRetryBackoffMs: 500,
  loopRecoveries: 0,
  budget: Object.freeze({}),
});

/** The longest wait before a model retry, whatever the backoff or the provider's Retry-After says. */
export const MAX_RETRY_DELAY_MS = 60_000;

const LIMIT_KEYS = [
  'maxIterations',
  'loopThreshold',
  'loopExemptTools',
  'maxOutputRepairs',
  'maxCallsPerReply',
  'maxModelRetries',
  'modelRetryBackoffMs',
  'loopRecoveries',
  'budget',
] as const;
const BUDGET_KEYS = ['maxModelCalls', 'maxToolCalls', 'maxInputTokens', 'maxOutputTokens', 'maxTotalTokens', 'maxCost'] as const;

const show = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value) : String(value));

/**
 * The limits a turn starts from: each layer's limits over the one before (a stored turn's own over
 * its agent's, key by key), with `exempt` (the tools the dispatcher declares exempt from loop
 * detection) joining `loopExemptTools`. Unchecked: `createTurn` checks the result.
 */
export function layerLimits(
  layers: readonly (TurnLimitsInput | null | undefined)[],
  exempt: readonly string[],
): TurnLimitsInput | undefined {
  let out: TurnLimitsInput | undefined;
  for (const layer of layers) if (layer !== undefined && layer !== null) out = { ...out, ...layer };
  if (exempt.length === 0) return out;
  const names = new Set([...(out?.loopExemptTools ?? []), ...exempt]);
  return { ...out, loopExemptTools: [...names] };
}

/** A RangeError for one option; `option` is its path below `limits`, such as `budget.maxToolCalls` ('' for `limits` itself). */
export class LimitError extends RangeError {
  readonly option: string;
  constructor(option: string, message: string) {
    super(message);
    this.name = 'RangeError';
    this.option = option;
  }
}

function integer(name: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new LimitError(
      name,
      `limits.${name} must be an integer >= ${min} (at most ${Number.MAX_SAFE_INTEGER}), got ${show(value)}.`,
    );
  }
  return value;
}

/**
 * Limits this module made (frozen, so nothing changed them since): given again, as an agent gives
 * its limits to each turn, they are used as they are instead of being checked and copied again.
 */
const checked = new WeakSet<object>([DEFAULT_LIMITS]);

export function validateLimits(input: TurnLimitsInput | undefined): TurnLimits {
  if (input === undefined) return DEFAULT_LIMITS;
  if (checked.has(input)) return input as TurnLimits;
  if (input === null || typeof input !== 'object') throw new LimitError('', `limits must be an object, got ${show(input)}.`);
  for (const key of Object.keys(input)) {
    if (!(LIMIT_KEYS as readonly string[]).includes(key)) {
      throw new LimitError(key, `limits has an unknown option '${key}'. Known options: ${LIMIT_KEYS.join(', ')}.`);
    }
  }
  const maxIterations =
    input.maxIterations === undefined ? DEFAULT_LIMITS.maxIterations : integer('maxIterations', input.maxIterations, 1);
  const loopThreshold =
    input.loopThreshold === undefined ? DEFAULT_LIMITS.loopThreshold : integer('loopThreshold', input.loopThreshold, 0);
  if (loopThreshold === 1) {
    throw new LimitError(
      'loopThreshold',
      'limits.loopThreshold must be 0 (off) or at least 2: one batch alone cannot repeat, got 1.',
    );
  }
  const maxOutputRepairs =
    input.maxOutputRepairs === undefined
      ? DEFAULT_LIMITS.maxOutputRepairs
      : integer('maxOutputRepairs', input.maxOutputRepairs, 0);
  const maxCallsPerReply =
    input.maxCallsPerReply === undefined
      ? DEFAULT_LIMITS.maxCallsPerReply
      : integer('maxCallsPerReply', input.maxCallsPerReply, 1);
  const maxModelRetries =
    input.maxModelRetries === undefined ? DEFAULT_LIMITS.maxModelRetries : integer('maxModelRetries', input.maxModelRetries, 0);
  const modelRetryBackoffMs =
    input.modelRetryBackoffMs === undefined
      ? DEFAULT_LIMITS.modelRetryBackoffMs
      : integer('modelRetryBackoffMs', input.modelRetryBackoffMs, 0);
  const loopRecoveries =
    input.loopRecoveries === undefined ? DEFAULT_LIMITS.loopRecoveries : integer('loopRecoveries', input.loopRecoveries, 0);
  const exempt = input.loopExemptTools ?? [];
  if (!Array.isArray(exempt) || exempt.some((name) => typeof name !== 'string')) {
    throw new LimitError('loopExemptTools', `limits.loopExemptTools must be an array of tool names, got ${show(exempt)}.`);
  }
  const limits: TurnLimits = Object.freeze({
    maxIterations,
    loopThreshold,
    loopExemptTools: Object.freeze([...exempt]),
    maxOutputRepairs,
    maxCallsPerReply,
    maxModelRetries,
    modelRetryBackoffMs,
    loopRecoveries,
    budget: Object.freeze(validateBudget(input.budget)),
  });
  checked.add(limits);
  return limits;
}

function validateBudget(input: TurnBudget | undefined): TurnBudget {
  if (input === undefined) return {};
  if (input === null || typeof input !== 'object')
    throw new LimitError('budget', `limits.budget must be an object, got ${show(input)}.`);
  const budget: { -readonly [K in keyof TurnBudget]: number } = {};
  for (const [key, value] of Object.entries(input)) {
    if (!(BUDGET_KEYS as readonly string[]).includes(key)) {
      throw new LimitError(
        `budget.${key}`,
        `limits.budget has an unknown option '${key}'. Known options: ${BUDGET_KEYS.join(', ')}.`,
      );
    }
    if (value === undefined) continue;
    if (key === 'maxCost') {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
        throw new LimitError('budget.maxCost', `limits.budget.maxCost must be a finite number >= 0, got ${show(value)}.`);
      }
      budget.maxCost = value;
    } else {
      budget[key as Exclude<keyof TurnBudget, 'maxCost'>] = integer(`budget.${key}`, value, 0);
    }
  }
  return budget;
}

/**
 * The stricter of two limits, each option on its own: the smaller count, the budget each of
 * them sets (the smaller when both do), the exempt tools `a` keeps. A handoff applies the next
 * agent's limits this way, so a handoff never loosens what the turn started with.
 */
export function stricterLimits(a: TurnLimits, b: TurnLimits): TurnLimits {
  const budget: { -readonly [K in keyof TurnBudget]: number } = { ...a.budget };
  for (const key of BUDGET_KEYS) {
    const other = b.budget[key];
    if (other === undefined) continue;
    const own = budget[key];
    budget[key] = own === undefined ? other : Math.min(own, other);
  }
  return validateLimits({
    maxIterations: Math.min(a.maxIterations, b.maxIterations),
    // 0 turns loop detection off: the stricter is the smaller threshold that is on.
    loopThreshold:
      a.loopThreshold === 0
        ? b.loopThreshold
        : b.loopThreshold === 0
          ? a.loopThreshold
          : Math.min(a.loopThreshold, b.loopThreshold),
    loopExemptTools: a.loopExemptTools,
    maxOutputRepairs: Math.min(a.maxOutputRepairs, b.maxOutputRepairs),
    maxCallsPerReply: Math.min(a.maxCallsPerReply, b.maxCallsPerReply),
    maxModelRetries: Math.min(a.maxModelRetries, b.maxModelRetries),
    modelRetryBackoffMs: a.modelRetryBackoffMs,
    loopRecoveries: Math.min(a.loopRecoveries, b.loopRecoveries),
    budget,
  });
}

/**
 * A child turn's limits: its agent's own (`own`, exempt tools included), with every budget of the
 * parent cut to what the parent has left after `used`. The child's usage is added to the
 * parent's when it ends, so the tree as a whole keeps the parent's budgets.
 */
export function childLimits(
  own: TurnLimits,
  parent: TurnLimits,
  used: Usage & { modelCalls: number; toolCalls: number },
): TurnLimits {
  const left: { -readonly [K in keyof TurnBudget]: number } = {};
  const p = parent.budget;
  const rest = (max: number | undefined, spent: number): number | undefined =>
    max === undefined ? undefined : Math.max(0, max - spent);
  const entries: Array<[keyof TurnBudget, number | undefined]> = [
    ['maxModelCalls', rest(p.maxModelCalls, used.modelCalls)],
    ['maxToolCalls', rest(p.maxToolCalls, used.toolCalls)],
    ['maxInputTokens', rest(p.maxInputTokens, used.inputTokens)],
    ['maxOutputTokens', rest(p.maxOutputTokens, used.outputTokens)],
    ['maxTotalTokens', rest(p.maxTotalTokens, used.totalTokens)],
    ['maxCost', rest(p.maxCost, used.cost)],
  ];
  for (const [key, value] of entries) if (value !== undefined) left[key] = value;
  const budget: { -readonly [K in keyof TurnBudget]: number } = { ...own.budget };
  for (const [key, value] of Object.entries(left) as Array<[keyof TurnBudget, number]>) {
    const mine = budget[key];
    budget[key] = mine === undefined ? value : Math.min(mine, value);
  }
  return validateLimits({ ...own, loopExemptTools: own.loopExemptTools, budget });
}
