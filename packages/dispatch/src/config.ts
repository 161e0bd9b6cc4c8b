// Options validation: `DispatcherOptions` in, a frozen `DispatcherConfig` out, or a TypeError that
// names the bad entry and says what to pass instead. Nothing later reads the caller's options
// object again, so changing it after `createDispatcher` changes nothing.

import { isJsonValue, type JsonObject } from '@turnkit/core/internal';
import type { ToolSpec } from '@turnkit/core';
import type { BudgetLimits } from './budget.js';
import type { ToolDefinition } from './define.js';
import { deepFreeze } from './context.js';
import { checkGrant } from './grants.js';
import { parsePattern, type Pattern } from './patterns.js';
import { checkRetryPolicy, type RetryPolicy } from './retry.js';
import { quote } from './text.js';
import type {
  AfterHook,
  BeforeHook,
  BudgetUsage,
  CallRecord,
  DecisionRecord,
  DispatcherOptions,
  ExecutionWrapper,
  Grant,
  Policy,
} from './types.js';

// any: see CallInfo.tool.
export type AnyTool = ToolDefinition<any>;

/** What the pipeline runs with: checked once, frozen, never read from the caller again. */
export interface DispatcherConfig {
  /** By exact name; a Map, so a model-chosen `__proto__` is just an unknown tool. */
  readonly tools: ReadonlyMap<string, AnyTool>;
  /** The tools sorted by name, for the registry's `list()`. */
  readonly sorted: readonly AnyTool[];
  readonly specs: readonly ToolSpec[];
  /** The tool names, sorted, for "Unknown tool" texts: `a, b, c` or `(none)`. */
  readonly availableText: string;
  readonly loopExempt: readonly string[];
  readonly concurrency: number;
  readonly maxOutputChars: number;
  readonly defaultTimeoutMs: number;
  /** How long a person has to decide a parked call of a tool without its own `approvalTimeoutMs`; undefined: no limit. */
  readonly approvalTimeoutMs: number | undefined;
  /** The permission sets in order: the first with a matching rule decides (a single `permissions` object is one unnamed set). */
  readonly permissionSets: readonly PermissionSet[];
  readonly hooks: { readonly before: readonly BeforeHook[]; readonly after: readonly AfterHook[] };
  readonly policy: Policy | undefined;
  readonly nonInteractive: boolean;
  readonly defaultDecision: 'allow' | 'ask';
  readonly yolo: boolean;
  readonly onDecision: ((record: DecisionRecord) => void) | undefined;
  readonly wrapExecution: ExecutionWrapper | undefined;
  readonly retryPolicy: RetryPolicy;
  /** Coerce a failing input towards its tool's schema, for tools that do not say (`coerce` of a tool wins). */
  readonly coerce: boolean;
  readonly onRecord: ((record: CallRecord) => void) | undefined;
  readonly context: JsonObject;
  readonly budget: BudgetLimits;
  readonly budgetUsage: BudgetUsage;
  readonly grants: readonly Grant[];
}

/** One permission set, parsed: `name` is absent for a single `permissions` object. */
export interface PermissionSet {
  readonly name?: string;
  readonly deny: readonly Pattern[];
  readonly allow: readonly Pattern[];
  readonly ask: readonly Pattern[];
}

const OPTION_KEYS = new Set([
  'tools',
  'hooks',
  'policy',
  'permissions',
  'budget',
  'budgetUsage',
  'grants',
  'concurrency',
  'maxOutputChars',
  'defaultTimeoutMs',
  'approvalTimeoutMs',
  'nonInteractive',
  'defaultDecision',
  'yolo',
  'onDecision',
  'wrapExecution',
  'retryPolicy',
  'onRecord',
  'context',
  'coerce',
]);
/** setTimeout fires at once for longer delays, so longer timeouts are refused. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

function optionError(message: string): never {
  throw new TypeError(`createDispatcher: ${message}`);
}

/** A short description of a bad option value for an error message. */
function describeOption(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'function') return 'a function';
  if (typeof value !== 'object') return `${typeof value} ${JSON.stringify(value)}`;
  const keys = Object.keys(value);
  return keys.length === 0 ? 'an empty object' : `an object with keys ${keys.slice(0, 6).join(', ')}`;
}

function checkCount(value: unknown, what: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    optionError(`${what} must be a whole number from ${min} to ${max}, got ${String(value)}.`);
  }
  return value;
}

function checkTools(list: unknown): Map<string, AnyTool> {
  if (!Array.isArray(list)) optionError('tools must be an array of tools made with defineTool.');
  const tools = new Map<string, AnyTool>();
  const lowerNames = new Map<string, string>();
  for (const [index, tool] of (list as readonly AnyTool[]).entries()) {
    if (
      tool === null ||
      typeof tool !== 'object' ||
      typeof tool.name !== 'string' ||
      typeof tool.execute !== 'function' ||
      tool.inputSchema === undefined
    ) {
      optionError(
        `tools[${index}] is ${describeOption(tool)}, not a tool: make every entry with defineTool({ name, description, input, execute }).`,
      );
    }
    if (tools.has(tool.name)) optionError(`tool ${quote(tool.name)} is defined twice; tool names must be unique.`);
    const other = lowerNames.get(tool.name.toLowerCase());
    if (other !== undefined)
      optionError(
        `tools ${quote(other)} and ${quote(tool.name)} differ only in case; permission patterns are case-insensitive, so rename one.`,
      );
    tools.set(tool.name, tool);
    lowerNames.set(tool.name.toLowerCase(), tool.name);
  }
  return tools;
}

function checkPatterns(list: readonly string[] | undefined, which: string): readonly Pattern[] {
  if (list === undefined) return Object.freeze([]);
  if (!Array.isArray(list)) optionError(`${which} must be an array of patterns like 'shell' or 'shell:cmd=ls*'.`);
  return Object.freeze(list.map((p) => parsePattern(p)));
}

const SET_KEYS = ['deny', 'allow', 'ask'];

/** One permission set; `index` is its place in a list of named sets (undefined: the single object). */
function checkSet(value: unknown, index: number | undefined): PermissionSet {
  const where = index === undefined ? 'permissions' : `permissions[${index}]`;
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    optionError(`${where} must be an object { deny?, allow?, ask? }${index === undefined ? '' : ' with a name'}.`);
  const set = value as Record<string, unknown>;
  const known = index === undefined ? SET_KEYS : ['name', ...SET_KEYS];
  for (const key of Object.keys(set))
    if (!known.includes(key)) optionError(`${where} has unknown key '${key}'; its keys are ${known.join(', ')}.`);
  const patterns = (which: string) => checkPatterns(set[which] as readonly string[] | undefined, `${where}.${which}`);
  const rules = { deny: patterns('deny'), allow: patterns('allow'), ask: patterns('ask') };
  if (index === undefined) return Object.freeze(rules);
  const name = set['name'];
  if (typeof name !== 'string' || !/^[a-zA-Z0-9_.-]{1,64}$/.test(name))
    optionError(
      `${where}.name must be 1 to 64 letters, digits, '_', '.' or '-' (it names the set in decision sources), got ${describeOption(name)}.`,
    );
  return Object.freeze({ name, ...rules });
}

/** `permissions`: one object (an unnamed set) or an ordered list of named sets with distinct names. */
function checkPermissionSets(permissions: unknown): readonly PermissionSet[] {
  if (permissions === undefined) return Object.freeze([]);
  if (!Array.isArray(permissions)) return Object.freeze([checkSet(permissions, undefined)]);
  const sets = permissions.map((set, index) => checkSet(set, index));
  const names = new Set<string>();
  for (const set of sets) {
    if (names.has(set.name as string)) optionError(`permissions names the set '${set.name}' twice; set names must be unique.`);
    names.add(set.name as string);
  }
  return Object.freeze(sets);
}

function checkHooks(hooks: DispatcherOptions['hooks']): DispatcherConfig['hooks'] {
  const before: readonly BeforeHook[] = hooks?.before ?? [];
  const after: readonly AfterHook[] = hooks?.after ?? [];
  if (!Array.isArray(before) || !Array.isArray(after))
    optionError('hooks.before and hooks.after must be arrays of { name, run }.');
  for (const [which, list] of [
    ['before', before],
    ['after', after],
  ] as const) {
    for (const [index, hook] of (list as readonly unknown[]).entries()) {
      const h = hook as { name?: unknown; run?: unknown } | null;
      if (h === null || typeof h !== 'object' || typeof h.name !== 'string' || h.name === '' || typeof h.run !== 'function') {
        optionError(
          `hooks.${which}[${index}] is ${describeOption(hook)}; every hook must be an object { name: 'a non-empty name', run: (…) => … }.`,
        );
      }
    }
  }
  return Object.freeze({ before: Object.freeze([...before]), after: Object.freeze([...after]) });
}

function checkBudget(
  options: DispatcherOptions,
  tools: ReadonlyMap<string, AnyTool>,
  availableText: string,
): Pick<DispatcherConfig, 'budget' | 'budgetUsage'> {
  const maxCalls = options.budget?.maxCalls === undefined ? undefined : checkCount(options.budget.maxCalls, 'budget.maxCalls', 0);
  const perTool = new Map<string, number>();
  for (const [name, limit] of Object.entries(options.budget?.perTool ?? {})) {
    if (!tools.has(name))
      optionError(`budget.perTool names ${quote(name)}, which is not a defined tool. Defined tools: ${availableText}.`);
    perTool.set(name, checkCount(limit, `budget.perTool.${name}`, 0));
  }
  const total = options.budgetUsage === undefined ? 0 : checkCount(options.budgetUsage.total, 'budgetUsage.total', 0);
  const used = Object.entries(options.budgetUsage?.perTool ?? {}).map(
    ([name, count]) => [name, checkCount(count, `budgetUsage.perTool.${name}`, 0)] as const,
  );
  return {
    budget: Object.freeze({ maxCalls, perTool }),
    budgetUsage: Object.freeze({ total, perTool: Object.freeze(Object.fromEntries(used)) }),
  };
}

function checkGrants(grants: unknown): readonly Grant[] {
  if (grants !== undefined && !Array.isArray(grants)) optionError('grants must be an array, as dispatcher.grants() returns it.');
  return Object.freeze(((grants ?? []) as readonly unknown[]).map(checkGrant));
}

/**
 * Checks `options` and returns the frozen configuration. Throws a `TypeError` naming the bad entry
 * (an unknown option, a duplicate tool name, a malformed pattern or hook, a bad limit or grant).
 */
export function resolveConfig(options: DispatcherOptions): DispatcherConfig {
  if (options === null || typeof options !== 'object') optionError('pass an options object with at least { tools: [...] }.');
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) optionError(`unknown option '${key}'. Known options: ${[...OPTION_KEYS].join(', ')}.`);
  }
  const tools = checkTools(options.tools);
  // Code-unit order, the same on every machine (localeCompare is not).
  const sorted = Object.freeze([...tools.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)));
  const availableText = sorted.map((t) => t.name).join(', ') || '(none)';
  const concurrency = options.concurrency === undefined ? 8 : checkCount(options.concurrency, 'concurrency', 1);
  const maxOutputChars = options.maxOutputChars === undefined ? 8000 : checkCount(options.maxOutputChars, 'maxOutputChars', 1);
  const defaultTimeoutMs =
    options.defaultTimeoutMs === undefined ? 30_000 : checkCount(options.defaultTimeoutMs, 'defaultTimeoutMs', 1, MAX_TIMEOUT_MS);
  const approvalTimeoutMs =
    options.approvalTimeoutMs === undefined
      ? undefined
      : checkCount(options.approvalTimeoutMs, 'approvalTimeoutMs', 1, Number.MAX_SAFE_INTEGER);
  for (const tool of tools.values()) {
    if (tool.timeoutMs !== undefined) checkCount(tool.timeoutMs, `timeoutMs of tool ${quote(tool.name)}`, 1, MAX_TIMEOUT_MS);
    if (tool.approvalTimeoutMs !== undefined)
      checkCount(tool.approvalTimeoutMs, `approvalTimeoutMs of tool ${quote(tool.name)}`, 1, Number.MAX_SAFE_INTEGER);
  }
  const permissionSets = checkPermissionSets(options.permissions);
  const defaultDecision = options.defaultDecision ?? 'ask';
  if (defaultDecision !== 'allow' && defaultDecision !== 'ask')
    optionError(`defaultDecision must be 'ask' or 'allow', got ${describeOption(defaultDecision)}.`);
  if (options.yolo !== undefined && typeof options.yolo !== 'boolean') optionError('yolo must be a boolean.');
  const hooks = checkHooks(options.hooks);
  if (options.policy !== undefined && typeof options.policy !== 'function')
    optionError('policy must be a function (call) => verdict.');
  if (options.onDecision !== undefined && typeof options.onDecision !== 'function')
    optionError('onDecision must be a function (record) => void.');
  if (options.wrapExecution !== undefined && typeof options.wrapExecution !== 'function')
    optionError('wrapExecution must be a function (execution, run) => Promise, calling run() once.');
  if (options.coerce !== undefined && typeof options.coerce !== 'boolean') optionError('coerce must be a boolean.');
  if (options.onRecord !== undefined && typeof options.onRecord !== 'function')
    optionError('onRecord must be a function (record) => void.');
  const context = options.context ?? {};
  if (context === null || typeof context !== 'object' || Array.isArray(context) || !isJsonValue(context))
    optionError(`context must be a JSON object, like { sessionId, userId, cwd }; got ${describeOption(context)}.`);
  let retryPolicy: RetryPolicy = {};
  if (options.retryPolicy !== undefined) {
    const checked = checkRetryPolicy(options.retryPolicy, false);
    if (typeof checked === 'string') optionError(`retryPolicy${checked}.`);
    retryPolicy = checked as RetryPolicy;
  }
  return Object.freeze({
    tools,
    sorted,
    specs: Object.freeze(
      [...tools.values()].map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
    ),
    availableText,
    loopExempt: Object.freeze([...tools.values()].filter((t) => t.loopExempt).map((t) => t.name)),
    concurrency,
    maxOutputChars,
    defaultTimeoutMs,
    approvalTimeoutMs,
    permissionSets,
    hooks,
    policy: options.policy,
    nonInteractive: options.nonInteractive === true,
    defaultDecision,
    yolo: options.yolo === true,
    onDecision: options.onDecision,
    wrapExecution: options.wrapExecution,
    retryPolicy,
    onRecord: options.onRecord,
    coerce: options.coerce === true,
    context: deepFreeze(structuredClone(context)),
    ...checkBudget(options, tools, availableText),
    grants: checkGrants(options.grants),
  });
}
