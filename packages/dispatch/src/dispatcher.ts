// The tool-call chokepoint. Every call goes through this pipeline, in this order:
//
//   1 normalise → 2 resolve → 3 validate → 4 before-hooks → 5 policy      (classify: a Verdict)
//   6 budget pre-check → 7 execute (timeout, abort, retry) → 8 budget record, after-hooks → 9 shape
//
// Rules of this file:
// - Nothing from a model, a tool, a hook or a policy is trusted. Every stage that runs user code
//   catches; a failure before the tool runs denies the call (fail closed), a failure after it
//   withholds the output. `classify`, `execute`, `dispatch` and `executeApproved` never throw.
// - Every call gets exactly one result (or is parked) and, from `dispatch`, exactly one decision
//   record. Records are emitted in call order, after the whole batch is classified.
// - The caller's context is read once per method call (`readContext`), into a plain `Turn` with a
//   cancellation of the dispatcher's own; an unreadable context fails every call, never the method.
// - Lookups by a model-chosen name use Maps, so `__proto__` or `constructor` is just an unknown tool.
// - Mutable state (grants, budget counters) lives on the dispatcher instance; `classify` reads it
//   and never changes it.

import type { ApprovalDecision, ParkedCall, ToolCall, ToolResult, ToolSpec } from '@turnkit/core';
import * as z from 'zod';
import { LazyCancellation, type Cancellation } from './cancellation.js';
import { TOOL_NAME, type ToolDefinition } from './define.js';
import { matchesPattern, parsePattern, type Pattern } from './patterns.js';
import { capOutput, errorMessage, quote, toJsonValue } from './shape.js';
import type {
  AfterHook,
  ApprovedVerdict,
  BeforeHook,
  BudgetUsage,
  CallInfo,
  DecisionRecord,
  DispatchContext,
  DispatchOutcome,
  Dispatcher,
  DispatcherOptions,
  Grant,
  RawResult,
  Verdict,
} from './types.js';

// any: see CallInfo.tool.
type AnyTool = ToolDefinition<any>;

const OPTION_KEYS = new Set([
  'tools', 'hooks', 'policy', 'permissions', 'budget', 'budgetUsage', 'grants', 'concurrency', 'maxOutputChars',
  'defaultTimeoutMs', 'nonInteractive', 'onDecision',
]);
// setTimeout fires at once for longer delays, so longer timeouts are refused.
const MAX_TIMEOUT_MS = 2_147_483_647;
const MAX_ISSUES = 20;

/** The policy stage's answer, before `nonInteractive` is applied. */
type PolicyOutcome = { readonly decision: 'allow' | 'deny' | 'ask'; readonly source: string; readonly reason: string; readonly text?: string };

type ThenFn = (onResolved: (value: unknown) => void, onRejected: (error: unknown) => void) => unknown;

/** What the dispatcher takes from a `DispatchContext`, read once: nothing of the caller's is read again. */
interface Turn {
  readonly turnId: string;
  /** The dispatcher's own cancellation, aborted when the caller's is. */
  readonly cancel: Cancellation;
  readonly onResult: ((result: ToolResult) => void) | undefined;
  /** Unsubscribes from the caller's cancellation; call when the work is done. */
  readonly release: () => void;
}

type RunOutcome =
  | { readonly kind: 'ok'; readonly value: unknown }
  | { readonly kind: 'error'; readonly error: unknown }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'cancelled' };

function errorResult(callId: string, name: string, text: string): ToolResult {
  return { callId, name, output: text, isError: true };
}

function deny(call: { readonly id: string; readonly name: string }, source: string, text: string): Verdict {
  return { kind: 'deny', result: errorResult(call.id, call.name, text), source };
}

/** A short description of a bad option value for an error message. */
function describeOption(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'function') return 'a function';
  if (typeof value !== 'object') return `${typeof value} ${JSON.stringify(value)}`;
  const keys = Object.keys(value);
  return keys.length === 0 ? 'an empty object' : `an object with keys ${keys.slice(0, 6).join(', ')}`;
}

function optionError(message: string): never {
  throw new TypeError(`createDispatcher: ${message}`);
}

function checkCount(value: unknown, what: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    optionError(`${what} must be a whole number from ${min} to ${max}, got ${String(value)}.`);
  }
  return value;
}

function checkGrant(grant: unknown): Grant {
  const g = grant as Record<string, unknown> | null;
  if (g !== null && typeof g === 'object') {
    if (g['scope'] === 'session' && Object.keys(g).length === 1) return { scope: 'session' };
    if (g['scope'] === 'tool' && Object.keys(g).length === 2) {
      if (typeof g['tool'] === 'string' && TOOL_NAME.test(g['tool'])) return { scope: 'tool', tool: g['tool'] };
      if (typeof g['pattern'] === 'string') {
        parsePattern(g['pattern']);
        return { scope: 'tool', pattern: g['pattern'] };
      }
    }
  }
  let shown: string;
  try {
    shown = JSON.stringify(grant)?.slice(0, 200) ?? String(grant);
  } catch {
    shown = 'an unreadable value';
  }
  throw new TypeError(`Grant ${shown} is invalid: use { scope: 'session' }, { scope: 'tool', tool: 'name' } or { scope: 'tool', pattern: 'tool:arg=glob' }.`);
}

function issuePath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  let text = '';
  for (const part of path) text += typeof part === 'number' ? `[${part}]` : `${text === '' ? '' : '.'}${String(part).slice(0, 60)}`;
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function describeIssues(name: string, issues: readonly { readonly path: readonly PropertyKey[]; readonly message: string }[]): string {
  const lines = issues.slice(0, MAX_ISSUES).map((issue) => `- ${issuePath(issue.path)}: ${issue.message.slice(0, 300)}`);
  if (issues.length > MAX_ISSUES) lines.push(`- … and ${issues.length - MAX_ISSUES} more`);
  return `Invalid input for ${quote(name)}:\n${lines.join('\n')}\nFix the arguments and call ${quote(name)} again.`;
}

/** Resolves to the promise's value, or to `aborted` when the turn is cancelled first. */
function raceAbort<T>(work: () => T | Promise<T>, cancel: Cancellation): Promise<{ readonly aborted: true } | { readonly aborted: false; readonly value: T }> {
  return new Promise((resolve, reject) => {
    if (cancel.aborted) return resolve({ aborted: true });
    const remove = cancel.onAbort(() => resolve({ aborted: true }));
    new Promise<T>((r) => r(work())).then(
      (value) => {
        remove();
        resolve({ aborted: false, value });
      },
      (error: unknown) => {
        remove();
        reject(error);
      },
    );
  });
}

/**
 * Waits `ms` (0: one macrotask, so timers and I/O run between two tries); false when the turn was
 * cancelled first.
 */
function sleep(ms: number, cancel: Cancellation): Promise<boolean> {
  return new Promise((resolve) => {
    if (cancel.aborted) return resolve(false);
    const remove = cancel.onAbort(() => {
      clearTimeout(timer);
      resolve(false);
    });
    const timer = setTimeout(() => {
      remove();
      resolve(true);
    }, ms);
  });
}

/** A call as hooks and policies see it; the AbortSignal is made only if one of them reads it. */
function callInfo(call: ToolCall, tool: AnyTool, input: unknown, turnId: string, cancel: Cancellation): CallInfo {
  return {
    call,
    tool,
    input,
    turnId,
    get signal() {
      return cancel.signal;
    },
  };
}

function noop(): void {}

/**
 * Reads a `DispatchContext` once, defensively: its `turnId`, `onResult`, and its `cancellation`
 * (or, without one, its `signal`), mirrored into a cancellation of the dispatcher's own. A context
 * that throws when read (a Proxy, a throwing getter, a signal that is not an AbortSignal) gives
 * the reason instead, and every call of it gets an error result. Not an object: an empty context.
 */
function readContext(ctx: unknown): Turn | { readonly problem: string } {
  if (ctx === null || typeof ctx !== 'object') return { turnId: '', cancel: new LazyCancellation(), onResult: undefined, release: noop };
  const own = new LazyCancellation();
  let release: () => void = noop;
  try {
    const c = ctx as Record<string, unknown>;
    const rawTurnId = c['turnId'];
    const turnId = typeof rawTurnId === 'string' ? rawTurnId : String(rawTurnId);
    const rawOnResult = c['onResult'];
    const onResult = typeof rawOnResult === 'function' ? (rawOnResult as (result: ToolResult) => void) : undefined;
    // A usable `cancellation` is preferred: reading `signal` may make an AbortSignal for nothing.
    const given = c['cancellation'] as { aborted?: unknown; reason?: unknown; onAbort?: unknown } | null | undefined;
    if (given !== null && typeof given === 'object' && typeof given.onAbort === 'function') {
      if (given.aborted === true) own.abort(reasonOf(given));
      else {
        const remove: unknown = (given.onAbort as (listener: () => void) => unknown).call(given, () => own.abort(reasonOf(given)));
        if (typeof remove === 'function') release = () => void (remove as () => unknown).call(undefined);
      }
    } else {
      const signal = c['signal'] as AbortSignal | null | undefined;
      if (signal !== undefined && signal !== null) {
        if (signal.aborted) own.abort(reasonOf(signal));
        else {
          const listener = (): void => own.abort(reasonOf(signal));
          signal.addEventListener('abort', listener, { once: true });
          release = () => signal.removeEventListener('abort', listener);
        }
      }
    }
    return { turnId, cancel: own, onResult, release: () => safely(release) };
  } catch (error) {
    safely(release);
    return { problem: errorMessage(error) };
  }
}

/** A cancellation's reason, read when it fires; one that throws when read is no reason. */
function reasonOf(source: { readonly reason?: unknown }): unknown {
  try {
    return source.reason;
  } catch {
    return undefined;
  }
}

function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // The caller's own code failed while being unsubscribed from; nothing is left to undo.
  }
}

function badContextText(name: string, problem: string): string {
  return `Call to ${quote(name)} not run: the dispatch context could not be read (${problem}). The program calling the dispatcher must pass a plain { turnId, signal? } object.`;
}

/** Runs `work` over `items` with at most `limit` in flight; `work` must not throw. */
async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  // The common batch of one call needs no workers.
  if (items.length === 1) return work(items[0] as T);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Creates the dispatcher every tool call flows through. Throws a `TypeError` naming the option on
 * invalid options (a duplicate tool name, a malformed pattern, a bad limit).
 *
 * @example
 * const dispatcher = createDispatcher({ tools: [add], permissions: { allow: ['shell:cmd=ls -la'], ask: ['shell'] } });
 * const { results, parked } = await dispatcher.dispatch(calls, { turnId: 't1', signal });
 */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  if (options === null || typeof options !== 'object') optionError('pass an options object with at least { tools: [...] }.');
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) optionError(`unknown option '${key}'. Known options: ${[...OPTION_KEYS].join(', ')}.`);
  }
  if (!Array.isArray(options.tools)) optionError('tools must be an array of tools made with defineTool.');

  const tools = new Map<string, AnyTool>();
  const lowerNames = new Map<string, string>();
  for (const [index, tool] of (options.tools as readonly AnyTool[]).entries()) {
    if (tool === null || typeof tool !== 'object' || typeof tool.name !== 'string' || typeof tool.execute !== 'function' || tool.inputSchema === undefined) {
      optionError(`tools[${index}] is ${describeOption(tool)}, not a tool: make every entry with defineTool({ name, description, input, execute }).`);
    }
    if (tools.has(tool.name)) optionError(`tool ${quote(tool.name)} is defined twice; tool names must be unique.`);
    const other = lowerNames.get(tool.name.toLowerCase());
    if (other !== undefined) optionError(`tools ${quote(other)} and ${quote(tool.name)} differ only in case; permission patterns are case-insensitive, so rename one.`);
    tools.set(tool.name, tool);
    lowerNames.set(tool.name.toLowerCase(), tool.name);
  }
  const specs: readonly ToolSpec[] = [...tools.values()].map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
  const availableText = [...tools.keys()].join(', ') || '(none)';
  const exempt = [...tools.values()].filter((t) => t.loopExempt).map((t) => t.name);

  const concurrency = options.concurrency === undefined ? 8 : checkCount(options.concurrency, 'concurrency', 1);
  const maxOutputChars = options.maxOutputChars === undefined ? 8000 : checkCount(options.maxOutputChars, 'maxOutputChars', 1);
  const defaultTimeoutMs = options.defaultTimeoutMs === undefined ? 30_000 : checkCount(options.defaultTimeoutMs, 'defaultTimeoutMs', 1, MAX_TIMEOUT_MS);
  for (const tool of tools.values()) {
    if (tool.timeoutMs !== undefined) checkCount(tool.timeoutMs, `timeoutMs of tool ${quote(tool.name)}`, 1, MAX_TIMEOUT_MS);
  }

  const patterns = (list: readonly string[] | undefined, which: string): readonly Pattern[] => {
    if (list === undefined) return [];
    if (!Array.isArray(list)) optionError(`permissions.${which} must be an array of patterns like 'shell' or 'shell:cmd=ls*'.`);
    return list.map((p) => parsePattern(p));
  };
  const permissions = options.permissions ?? {};
  const denyRules = patterns(permissions.deny, 'deny');
  const allowRules = patterns(permissions.allow, 'allow');
  const askRules = patterns(permissions.ask, 'ask');

  const hooksBefore: readonly BeforeHook[] = options.hooks?.before ?? [];
  const hooksAfter: readonly AfterHook[] = options.hooks?.after ?? [];
  if (!Array.isArray(hooksBefore) || !Array.isArray(hooksAfter)) optionError('hooks.before and hooks.after must be arrays of { name, run }.');
  for (const [which, list] of [['before', hooksBefore], ['after', hooksAfter]] as const) {
    for (const [index, hook] of (list as readonly unknown[]).entries()) {
      const h = hook as { name?: unknown; run?: unknown } | null;
      if (h === null || typeof h !== 'object' || typeof h.name !== 'string' || h.name === '' || typeof h.run !== 'function') {
        optionError(`hooks.${which}[${index}] is ${describeOption(hook)}; every hook must be an object { name: 'a non-empty name', run: (…) => … }.`);
      }
    }
  }
  if (options.policy !== undefined && typeof options.policy !== 'function') optionError('policy must be a function (call) => verdict.');
  if (options.onDecision !== undefined && typeof options.onDecision !== 'function') optionError('onDecision must be a function (record) => void.');
  const nonInteractive = options.nonInteractive === true;

  const maxCalls = options.budget?.maxCalls === undefined ? undefined : checkCount(options.budget.maxCalls, 'budget.maxCalls', 0);
  const perToolLimit = new Map<string, number>();
  for (const [name, limit] of Object.entries(options.budget?.perTool ?? {})) {
    if (!tools.has(name)) optionError(`budget.perTool names ${quote(name)}, which is not a defined tool. Defined tools: ${availableText}.`);
    perToolLimit.set(name, checkCount(limit, `budget.perTool.${name}`, 0));
  }
  let usedTotal = options.budgetUsage === undefined ? 0 : checkCount(options.budgetUsage.total, 'budgetUsage.total', 0);
  const usedPerTool = new Map<string, number>();
  for (const [name, count] of Object.entries(options.budgetUsage?.perTool ?? {})) usedPerTool.set(name, checkCount(count, `budgetUsage.perTool.${name}`, 0));
  // Calls that passed the pre-check and have not been recorded yet.
  let inFlightTotal = 0;
  const inFlightPerTool = new Map<string, number>();

  const grantList: Grant[] = [];
  const addGrant = (grant: unknown): void => {
    const checked = checkGrant(grant);
    if (!grantList.some((g) => JSON.stringify(g) === JSON.stringify(checked))) grantList.push(checked);
  };
  if (options.grants !== undefined && !Array.isArray(options.grants)) optionError('grants must be an array, as dispatcher.grants() returns it.');
  for (const g of options.grants ?? []) addGrant(g);

  // Verdicts made by classify: their input is already validated (and maybe transformed), so
  // execute must not parse it again. Any other execute verdict is validated first.
  const classified = new WeakSet<object>();

  const emit = (record: DecisionRecord): void => {
    try {
      options.onDecision?.(record);
    } catch {
      // An audit sink that fails must not lose a tool result; the record is dropped.
    }
  };

  // ---------------------------------------------------------------------------------------------
  // Stages 1–5

  async function validate(tool: AnyTool, call: ToolCall, value: unknown): Promise<{ ok: true; input: unknown } | { ok: false; text: string }> {
    try {
      const parsed = await z.safeParseAsync(tool.input, value);
      if (parsed.success) return { ok: true, input: parsed.data };
      return { ok: false, text: describeIssues(call.name, parsed.error.issues) };
    } catch (error) {
      return { ok: false, text: `The input for ${quote(call.name)} could not be checked (${errorMessage(error)}). Send a simpler input.` };
    }
  }

  /** `info` makes what a policy sees; only a policy needs it. */
  async function policyStage(call: ToolCall, tool: AnyTool, input: unknown, info: () => CallInfo, cancel: Cancellation): Promise<PolicyOutcome> {
    for (const rule of denyRules) {
      if (matchesPattern(rule, call.name, input, true)) {
        return { decision: 'deny', source: `rule:deny:${rule.source}`, reason: `denied by rule '${rule.source}'` };
      }
    }
    for (const grant of grantList) {
      if (grant.scope === 'session') return { decision: 'allow', source: 'grant:session', reason: 'approved for the session' };
      if ('tool' in grant && grant.tool.toLowerCase() === call.name.toLowerCase()) {
        return { decision: 'allow', source: `grant:tool:${grant.tool}`, reason: `approved for tool '${grant.tool}'` };
      }
      if ('pattern' in grant && matchesPattern(parsePattern(grant.pattern), call.name, input)) {
        return { decision: 'allow', source: `grant:pattern:${grant.pattern}`, reason: `approved for '${grant.pattern}'` };
      }
    }
    for (const rule of allowRules) {
      if (matchesPattern(rule, call.name, input)) return { decision: 'allow', source: `rule:allow:${rule.source}`, reason: `allowed by rule '${rule.source}'` };
    }
    for (const rule of askRules) {
      if (matchesPattern(rule, call.name, input, true)) return { decision: 'ask', source: `rule:ask:${rule.source}`, reason: `matches ask rule '${rule.source}'` };
    }
    if (options.policy !== undefined) {
      const policy = options.policy;
      let verdict: unknown;
      try {
        const seen = info();
        const raced = await raceAbort(() => policy(seen), cancel);
        if (raced.aborted) return { decision: 'deny', source: 'cancelled', reason: 'cancelled', text: `cancelled: the turn was cancelled before ${quote(call.name)} ran.` };
        verdict = raced.value;
      } catch (error) {
        return { decision: 'deny', source: 'policy_error', reason: `the policy check failed (${errorMessage(error)})` };
      }
      const v = verdict as { kind?: unknown; reason?: unknown } | undefined;
      if (v !== undefined) {
        if (v === null || typeof v !== 'object') return { decision: 'deny', source: 'policy_error', reason: 'the policy returned an unrecognised verdict' };
        if (v.kind === 'allow') return { decision: 'allow', source: 'policy', reason: 'allowed by policy' };
        if ((v.kind === 'deny' || v.kind === 'ask') && typeof v.reason === 'string') return { decision: v.kind, source: 'policy', reason: v.reason };
        return { decision: 'deny', source: 'policy_error', reason: 'the policy returned an unrecognised verdict' };
      }
    }
    if (tool.needsApproval === true) return { decision: 'ask', source: 'needs_approval', reason: `tool '${tool.name}' needs approval` };
    if (typeof tool.needsApproval === 'function') {
      let needed: unknown;
      try {
        needed = tool.needsApproval(input);
      } catch (error) {
        return { decision: 'deny', source: 'needs_approval_error', reason: `its needsApproval check failed (${errorMessage(error)})` };
      }
      if (needed === true) return { decision: 'ask', source: 'needs_approval', reason: `tool '${tool.name}' needs approval for this input` };
      if (needed !== false) return { decision: 'deny', source: 'needs_approval_error', reason: 'its needsApproval check did not return a boolean' };
    }
    return tool.readOnly ? { decision: 'allow', source: 'readonly', reason: 'read-only tool' } : { decision: 'allow', source: 'default', reason: 'no rule applied' };
  }

  async function classifyCall(raw: unknown, turn: Turn, skipPolicy: boolean): Promise<Verdict> {
    // Stage 1: normalise. Read each field once, into a plain copy.
    const c = raw as Record<string, unknown> | null;
    if (c === null || typeof c !== 'object') {
      return deny({ id: '', name: '' }, 'invalid_call', 'A tool call must be an object with an id, a name and an input; this one was not. Call the tool again.');
    }
    const id = c['id'];
    const name = c['name'];
    if (typeof id !== 'string' || typeof name !== 'string') {
      return deny(
        { id: typeof id === 'string' ? id : '', name: typeof name === 'string' ? name : '' },
        'invalid_call',
        'A tool call needs a string id and a string tool name; this one did not have them. Call the tool again.',
      );
    }
    const call: ToolCall = { id, name, input: c['input'] as ToolCall['input'] };
    const inputError = c['inputError'];
    if (inputError !== undefined) {
      const detail = typeof inputError === 'string' && inputError !== '' ? ` (${inputError.slice(0, 200)})` : '';
      return deny(call, 'invalid_json', `The arguments for ${quote(name)} were not valid JSON${detail}. Call ${quote(name)} again with the arguments as one JSON object.`);
    }
    // Stage 2: resolve.
    const tool = tools.get(name);
    if (tool === undefined) return deny(call, 'unknown_tool', `Unknown tool ${quote(name)}. Available tools: ${availableText}.`);
    // Stage 3: validate.
    const checked = await validate(tool, call, call.input);
    if (!checked.ok) return deny(call, 'invalid_input', checked.text);
    let input = checked.input;
    const { cancel, turnId } = turn;
    const cancelledBefore = (): Verdict => deny(call, 'cancelled', `cancelled: the turn was cancelled before ${quote(name)} ran.`);
    // Stage 4: before-hooks, in order.
    for (const hook of hooksBefore) {
      if (cancel.aborted) return cancelledBefore();
      const source = `hook:${hook.name}`;
      let outcome: unknown;
      try {
        const info = callInfo(call, tool, input, turnId, cancel);
        const raced = await raceAbort(() => hook.run(info), cancel);
        if (raced.aborted) return cancelledBefore();
        outcome = raced.value;
      } catch (error) {
        return deny(call, source, `Call to ${quote(name)} denied: before-hook '${hook.name}' failed (${errorMessage(error)}). Do not retry it unchanged.`);
      }
      const o = outcome as { kind?: unknown; input?: unknown; output?: unknown; isError?: unknown } | undefined;
      if (o === undefined || (o !== null && typeof o === 'object' && o.kind === 'continue')) continue;
      if (o !== null && typeof o === 'object' && o.kind === 'rewrite' && 'input' in o) {
        const again = await validate(tool, call, o.input);
        if (!again.ok) {
          return deny(call, source, `Call to ${quote(name)} denied: before-hook '${hook.name}' rewrote its input into an invalid one. ${again.text}`);
        }
        input = again.input;
        continue;
      }
      if (o !== null && typeof o === 'object' && o.kind === 'halt' && (o.isError === undefined || typeof o.isError === 'boolean')) {
        return { kind: 'deny', source, result: sealed({ callId: call.id, name, output: o.output, isError: o.isError ?? true }) };
      }
      return deny(call, source, `Call to ${quote(name)} denied: before-hook '${hook.name}' returned an unrecognised value. Do not retry it unchanged.`);
    }
    if (skipPolicy) return { kind: 'execute', call, input, source: 'user_approved' };
    if (cancel.aborted) return cancelledBefore();
    // Stage 5: policy.
    const outcome = await policyStage(call, tool, input, () => callInfo(call, tool, input, turnId, cancel), cancel);
    if (outcome.text !== undefined) return deny(call, outcome.source, outcome.text);
    if (outcome.decision === 'deny') return deny(call, outcome.source, `Call to ${quote(name)} denied: ${outcome.reason}. Do not retry it unchanged; continue without it.`);
    if (outcome.decision === 'ask') {
      if (nonInteractive) {
        return deny(
          call,
          'non_interactive',
          `Call to ${quote(name)} denied: it needs approval (${outcome.reason}), but no one can approve calls in this non-interactive run. Continue without it.`,
        );
      }
      return { kind: 'needs_approval', call, reason: outcome.reason, source: outcome.source };
    }
    return { kind: 'execute', call, input, source: outcome.source };
  }

  async function classifySafely(raw: unknown, turn: Turn, skipPolicy: boolean): Promise<Verdict> {
    try {
      const verdict = await classifyCall(raw, turn, skipPolicy);
      if (verdict.kind === 'execute') classified.add(verdict);
      // Synthesised texts can be long (many validation issues): bound them like any output.
      return verdict.kind === 'deny' ? { ...verdict, result: sealed(verdict.result) } : verdict;
    } catch (error) {
      // A call whose fields throw when read (a hostile getter), or a bug here: deny this one call.
      return deny(idName(raw), 'internal_error', `Call denied: the dispatcher failed while checking it (${errorMessage(error)}).`);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Stages 6–9

  /** Stage 6. Returns the breach text, or undefined after reserving one call. */
  function reserve(call: ToolCall): { source: string; text: string } | undefined {
    if (maxCalls !== undefined && usedTotal + inFlightTotal >= maxCalls) {
      return { source: 'budget:maxCalls', text: `Call to ${quote(call.name)} not run: the tool-call budget is used up (budget.maxCalls = ${maxCalls}). Answer with what you have.` };
    }
    const limit = perToolLimit.get(call.name);
    const used = (usedPerTool.get(call.name) ?? 0) + (inFlightPerTool.get(call.name) ?? 0);
    if (limit !== undefined && used >= limit) {
      return {
        source: `budget:perTool:${call.name}`,
        text: `Call to ${quote(call.name)} not run: this tool's budget is used up (budget.perTool.${call.name} = ${limit}). Use another tool or answer with what you have.`,
      };
    }
    inFlightTotal++;
    inFlightPerTool.set(call.name, (inFlightPerTool.get(call.name) ?? 0) + 1);
    return undefined;
  }

  /** Stage 8, first half: the reserved call now counts as used. */
  function record(call: ToolCall): void {
    inFlightTotal--;
    inFlightPerTool.set(call.name, (inFlightPerTool.get(call.name) ?? 1) - 1);
    usedTotal++;
    usedPerTool.set(call.name, (usedPerTool.get(call.name) ?? 0) + 1);
  }

  /**
   * One try of the tool under its timeout and the turn's cancellation. The tool's AbortSignal is
   * made only if the tool reads `ctx.signal`, and a tool that returns a plain value (not a
   * promise) settles at once, without a timer: both cost more than a small tool itself.
   */
  function runOnce(tool: AnyTool, call: ToolCall, input: unknown, turnId: string, turn: Cancellation, timeoutMs: number, deadline: number): RunOutcome | Promise<RunOutcome> {
    let controller: AbortController | undefined;
    let toolAbort: { readonly reason: unknown } | undefined;
    const abortTool = (reason: unknown): void => {
      toolAbort = { reason };
      controller?.abort(reason);
    };
    const toolCtx = {
      get signal(): AbortSignal {
        if (controller === undefined) {
          controller = new AbortController();
          if (toolAbort !== undefined) controller.abort(toolAbort.reason);
        }
        return controller.signal;
      },
      callId: call.id,
      turnId,
    };
    if (turn.aborted) {
      abortTool(turn.reason);
      return { kind: 'cancelled' };
    }
    let value: unknown;
    let then: unknown;
    try {
      value = tool.execute(input, toolCtx);
      // Read `then` once, as promise resolution would: a throwing getter is the tool's error.
      then = value !== null && (typeof value === 'object' || typeof value === 'function') ? (value as { then?: unknown }).then : undefined;
    } catch (error) {
      // A tool that cancelled the turn while it ran is reported as cancelled, not as an error.
      if (turn.aborted) {
        abortTool(turn.reason);
        return { kind: 'cancelled' };
      }
      return { kind: 'error', error };
    }
    // A tool that returned a plain value has finished: its result is real even if the turn was
    // cancelled meanwhile (the side effect happened), so it is kept.
    if (typeof then !== 'function') return { kind: 'ok', value };
    if (turn.aborted) {
      // The dropped promise may reject on abort: handle it so it is not an unhandled rejection.
      new Promise<unknown>((r, j) => void (then as ThenFn).call(value, r, j)).catch(() => undefined);
      abortTool(turn.reason);
      return { kind: 'cancelled' };
    }
    return new Promise((resolve) => {
      let settled = false;
      const settle = (outcome: RunOutcome): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        removeAbort();
        resolve(outcome);
      };
      // Abort the tool's signal first, then settle: a tool that rejects on abort does so a
      // microtask later, so the call is reported as cancelled or timed out, not as an error.
      const removeAbort = turn.onAbort(() => {
        abortTool(turn.reason);
        settle({ kind: 'cancelled' });
      });
      // The timeout counts from the start of the call's first try, as if set before `execute` ran.
      const timer = setTimeout(
        () => {
          abortTool(new DOMException(`Tool '${tool.name}' timed out after ${timeoutMs} ms.`, 'TimeoutError'));
          settle({ kind: 'timeout' });
        },
        Math.max(0, deadline - performance.now()),
      );
      // A tool that ignores its signal keeps running after a timeout; its late result is dropped.
      new Promise<unknown>((r, j) => void (then as ThenFn).call(value, r, j)).then(
        (result) => settle({ kind: 'ok', value: result }),
        (error: unknown) => settle({ kind: 'error', error }),
      );
    });
  }

  function shouldRetry(tool: AnyTool, error: unknown): boolean {
    try {
      return tool.retry?.retryOn?.(error) === true;
    } catch {
      return false;
    }
  }

  /**
   * Stage 7. The timeout is one deadline for the whole call, every try and every wait between
   * tries included; between two tries the dispatcher always yields at least one macrotask, so a
   * tool that fails synchronously cannot starve the timers of the timeout and the turn's cancel.
   */
  async function runTool(tool: AnyTool, call: ToolCall, input: unknown, turnId: string, cancel: Cancellation): Promise<RawResult> {
    const attempts = tool.retry?.attempts ?? 1;
    const backoffMs = tool.retry?.backoffMs ?? 0;
    const timeoutMs = tool.timeoutMs ?? defaultTimeoutMs;
    const deadline = performance.now() + timeoutMs;
    const cancelledDuring: RawResult = { callId: call.id, name: call.name, output: `cancelled: ${quote(call.name)} was stopped because the turn was cancelled.`, isError: true };
    const timedOut: RawResult = { callId: call.id, name: call.name, output: `Tool '${call.name}' timed out after ${timeoutMs} ms.`, isError: true };
    for (let attempt = 1; ; attempt++) {
      if (cancel.aborted) {
        return attempt === 1 ? { ...cancelledDuring, output: `cancelled: the turn was cancelled before ${quote(call.name)} ran.` } : cancelledDuring;
      }
      const outcome = await runOnce(tool, call, input, turnId, cancel, timeoutMs, deadline);
      switch (outcome.kind) {
        case 'ok':
          return { callId: call.id, name: call.name, output: outcome.value, isError: false };
        case 'timeout':
          return timedOut;
        case 'cancelled':
          return cancelledDuring;
        case 'error': {
          if (attempt < attempts && shouldRetry(tool, outcome.error)) {
            // 2 ** n overflows to Infinity for large n, and 0 * Infinity is NaN.
            const backoff = backoffMs === 0 ? 0 : backoffMs * 2 ** (attempt - 1);
            const left = deadline - performance.now();
            if (!(await sleep(Math.max(0, Math.min(backoff, left, MAX_TIMEOUT_MS)), cancel))) return cancelledDuring;
            if (backoff >= left || performance.now() >= deadline) return timedOut;
            continue;
          }
          return { callId: call.id, name: call.name, output: `Error calling tool '${call.name}': ${errorMessage(outcome.error)}`, isError: true };
        }
      }
    }
  }

  /** Stage 8, second half: after-hooks in order; a failing hook withholds the output. */
  async function afterHooks(result: RawResult, info: CallInfo, cancel: Cancellation): Promise<RawResult> {
    let current = result;
    for (const hook of hooksAfter) {
      const withheld = (why: string): RawResult => ({
        ...current,
        output: `The result of ${quote(info.call.name)} was withheld: after-hook '${hook.name}' ${why}. The tool did run; do not assume it failed or succeeded.`,
        isError: true,
      });
      let outcome: unknown;
      try {
        const raced = await raceAbort(() => hook.run(current, info), cancel);
        if (raced.aborted) {
          current = withheld('did not finish because the turn was cancelled');
          continue;
        }
        outcome = raced.value;
      } catch (error) {
        current = withheld(`failed (${errorMessage(error)})`);
        continue;
      }
      if (outcome === undefined) continue;
      const o = outcome as { output?: unknown; isError?: unknown; stop?: { reason?: unknown } | null };
      const badStop = o.stop !== undefined && (o.stop === null || typeof o.stop !== 'object' || typeof o.stop.reason !== 'string');
      if (o === null || typeof o !== 'object' || (o.isError !== undefined && typeof o.isError !== 'boolean') || badStop) {
        current = withheld('returned an unrecognised value');
        continue;
      }
      current = {
        ...current,
        ...('output' in o ? { output: o.output } : {}),
        ...(typeof o.isError === 'boolean' ? { isError: o.isError } : {}),
        ...(o.stop !== undefined && o.stop !== null ? { stop: { reason: String(o.stop.reason) } } : {}),
      };
    }
    return current;
  }

  /** Stage 9: a JSON output of bounded size. Every result leaves through here. */
  function sealed(raw: RawResult): ToolResult {
    const shaped = toJsonValue(raw.output);
    const output = shaped.ok
      ? capOutput(shaped.value, maxOutputChars)
      : `Tool ${quote(raw.name)} returned a value that is not JSON (${shaped.problem}). The tool ran, but its output cannot be shown.`;
    return {
      callId: raw.callId,
      name: raw.name,
      output,
      isError: shaped.ok ? raw.isError : true,
      ...(raw.stop === undefined ? {} : { stop: raw.stop }),
      ...(raw.modelOverride === undefined ? {} : { modelOverride: raw.modelOverride }),
    };
  }

  /** Stages 7–9 for a call whose budget is reserved. Never throws. */
  async function runReserved(tool: AnyTool, call: ToolCall, input: unknown, turn: Turn): Promise<ToolResult> {
    let recorded = false;
    try {
      const { cancel, turnId } = turn;
      const ran = await runTool(tool, call, input, turnId, cancel);
      record(call);
      recorded = true;
      const withModel: RawResult = tool.model === undefined ? ran : { ...ran, modelOverride: tool.model };
      return sealed(hooksAfter.length === 0 ? withModel : await afterHooks(withModel, callInfo(call, tool, input, turnId, cancel), cancel));
    } catch (error) {
      if (!recorded) record(call);
      return errorResult(call.id, call.name, `Error calling tool '${call.name}': the dispatcher failed while running it (${errorMessage(error)}).`);
    }
  }

  /** Stages 6–9 for an execute verdict. Never throws. */
  async function executeVerdict(verdict: Verdict | ApprovedVerdict, turn: Turn): Promise<ToolResult> {
    try {
      if (verdict.kind === 'deny') return verdict.result;
      const { call } = verdict;
      if (verdict.kind === 'needs_approval') {
        return errorResult(call.id, call.name, `Call to ${quote(call.name)} not run: it is waiting for approval (${verdict.reason}).`);
      }
      const tool = tools.get(call.name);
      if (tool === undefined) return errorResult(call.id, call.name, `Unknown tool ${quote(call.name)}. Available tools: ${availableText}.`);
      let input = verdict.input;
      if (!classified.has(verdict)) {
        const checked = await validate(tool, call, input);
        if (!checked.ok) return sealed(errorResult(call.id, call.name, checked.text));
        input = checked.input;
      }
      const breach = reserve(call);
      if (breach !== undefined) return errorResult(call.id, call.name, breach.text);
      return await runReserved(tool, call, input, turn);
    } catch (error) {
      const { id, name } = idName((verdict as { call?: unknown } | null)?.call);
      return errorResult(id, name, `Call not run: the dispatcher failed while running it (${errorMessage(error)}).`);
    }
  }

  /** Classifies in call order, reserves budget in call order, then runs up to `concurrency` at once. */
  async function runBatch(calls: readonly ToolCall[], ctx: DispatchContext, approved: boolean): Promise<{ results: ToolResult[]; parked: ParkedCall[] }> {
    let list: unknown[];
    try {
      list = Array.from(calls as unknown as ArrayLike<unknown>);
    } catch {
      list = [];
    }
    const turn = readContext(ctx);
    if ('problem' in turn) {
      const results = list.map((raw) => {
        const { id, name } = idName(raw);
        const result = errorResult(id, name, badContextText(name, turn.problem));
        if (!approved) emit({ callId: id, tool: name, decision: 'deny', source: 'invalid_context', ...textReason(result) });
        return result;
      });
      return { results, parked: [] };
    }
    try {
      return await runTurnBatch(list, turn, approved);
    } finally {
      turn.release();
    }
  }

  async function runTurnBatch(list: readonly unknown[], turn: Turn, approved: boolean): Promise<{ results: ToolResult[]; parked: ParkedCall[] }> {
    const slots: (ToolResult | undefined)[] = list.map(() => undefined);
    const parked: ParkedCall[] = [];
    const jobs: { index: number; tool: AnyTool; call: ToolCall; input: unknown }[] = [];
    const verdicts: Verdict[] = [];
    for (const raw of list) verdicts.push(await classifySafely(raw, turn, approved));
    verdicts.forEach((verdict, index) => {
      const tool = verdict.kind === 'deny' ? '' : verdict.call.name;
      if (verdict.kind === 'deny') {
        slots[index] = verdict.result;
        if (!approved) emit({ callId: verdict.result.callId, tool: verdict.result.name, decision: 'deny', source: verdict.source, ...textReason(verdict.result) });
        return;
      }
      if (verdict.kind === 'needs_approval') {
        // An approved batch never parks (policy is skipped); this branch is the dispatch path.
        parked.push({ call: verdict.call, reason: verdict.reason });
        emit({ callId: verdict.call.id, tool, decision: 'ask', source: verdict.source, reason: verdict.reason });
        return;
      }
      const breach = reserve(verdict.call);
      if (breach !== undefined) {
        slots[index] = errorResult(verdict.call.id, tool, breach.text);
        if (!approved) emit({ callId: verdict.call.id, tool, decision: 'deny', source: breach.source, reason: breach.text });
        return;
      }
      if (!approved) emit({ callId: verdict.call.id, tool, decision: 'allow', source: verdict.source });
      jobs.push({ index, tool: tools.get(tool) as AnyTool, call: verdict.call, input: verdict.input });
    });
    const onResult = turn.onResult;
    const announce = (result: ToolResult): void => {
      try {
        onResult?.(result);
      } catch {
        // An observer must not be able to lose a result or break the batch.
      }
    };
    for (const result of slots) if (result !== undefined) announce(result);
    await pool(jobs, concurrency, async (job) => {
      const result = await runReserved(job.tool, job.call, job.input, turn);
      slots[job.index] = result;
      announce(result);
    });
    return { results: slots.filter((r): r is ToolResult => r !== undefined), parked };
  }

  return {
    toolSpecs: () => specs,
    loopExemptTools: () => [...exempt],
    async classify(call, ctx) {
      const turn = readContext(ctx);
      if ('problem' in turn) {
        const { id, name } = idName(call);
        return deny({ id, name }, 'invalid_context', badContextText(name, turn.problem));
      }
      try {
        return await classifySafely(call, turn, false);
      } finally {
        turn.release();
      }
    },
    async execute(verdict, ctx) {
      const turn = readContext(ctx);
      if ('problem' in turn) {
        let call: unknown;
        try {
          call = verdict.kind === 'deny' ? { id: verdict.result.callId, name: verdict.result.name } : verdict.call;
        } catch {
          call = undefined;
        }
        const { id, name } = idName(call);
        return errorResult(id, name, badContextText(name, turn.problem));
      }
      try {
        return await executeVerdict(verdict, turn);
      } finally {
        turn.release();
      }
    },
    dispatch: (calls, ctx) => runBatch(calls, ctx, false),
    executeApproved: async (calls, ctx) => (await runBatch(calls, ctx, true)).results,
    recordDecision(call: ToolCall, decision: ApprovalDecision): void {
      const type = (decision as { type?: unknown } | null)?.type;
      if (type !== 'approve' && type !== 'reject') {
        throw new TypeError(`recordDecision for call '${String(call?.id)}' needs { type: 'approve' | 'reject' }, got ${String(type)}.`);
      }
      if (decision.type === 'approve') {
        const remember = decision.remember;
        emit({ callId: call.id, tool: call.name, decision: 'user_approved', source: remember === undefined ? 'user' : `user:remember_${remember}` });
        if (remember === 'session') addGrant({ scope: 'session' });
        else if (remember === 'tool') addGrant({ scope: 'tool', tool: call.name });
      } else {
        emit({ callId: call.id, tool: call.name, decision: 'user_rejected', source: 'user', ...(decision.reason === undefined ? {} : { reason: decision.reason }) });
      }
    },
    grant: addGrant,
    grants: () => grantList.map((g) => ({ ...g })),
    budgetUsage: () => ({ total: usedTotal, perTool: Object.fromEntries(usedPerTool) }),
  };
}

function textReason(result: ToolResult): { reason?: string } {
  return typeof result.output === 'string' ? { reason: result.output.slice(0, 500) } : {};
}

function idName(raw: unknown): { id: string; name: string } {
  try {
    const c = raw as { id?: unknown; name?: unknown } | null;
    return { id: typeof c?.id === 'string' ? c.id : '', name: typeof c?.name === 'string' ? c.name : '' };
  } catch {
    return { id: '', name: '' };
  }
}
