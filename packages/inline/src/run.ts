// runTurn / resumeTurn: set up a turn (state, transcript, dispatcher, abort wiring), hand it to
// the driver, and shape what the driver ends with into a TurnResult.

import {
  parseTurnState,
  resume,
  step,
  undecided,
  type Effect,
  type Message,
  type TurnEvent,
  type TurnLimitsInput,
  type TurnState,
  type JsonValue,
} from '@turnkit/core';
import { definedProps, sealParts, verifySeal, isJsonValue } from '@turnkit/core/internal';
import { dispatcherFactory, type Dispatcher, type GrantScope } from '@turnkit/dispatch';
import { newTurnCancellation, spareAfterTurn } from './spare-signal.js';
import { recordTaken } from './approvals.js';
import { prepareAgent, startTurn } from './agent.js';
import { TurnContext, type DriveOptions } from './context.js';
import { driveTurn, defaultHandlers, type EffectHandlers } from './driver.js';
import type { ResumeTurnOptions, RunTurnOptions, StepRecord, TurnResult } from './types.js';

/**
 * Runs one turn in-process: calls the model, runs tools through the dispatcher, and returns when
 * the turn stops, fails, is cancelled, or needs an approval nobody can give here (`suspended`).
 *
 * @example
 * const result = await runTurn({ model, tools: [add], input: 'What is 1 + 2?' });
 * console.log(result.status, result.text);
 */
export async function runTurn(options: RunTurnOptions, handlers: EffectHandlers = defaultHandlers): Promise<TurnResult> {
  checkCommon(options, 'runTurn');
  return startTurn(prepareAgent(options, 'runTurn'), options, options.input, handlers);
}

/**
 * Continues a suspended turn with decisions for its pending calls, also in another process after
 * `JSON.parse(JSON.stringify(result))`. Pass the same options as to `runTurn` (model, tools, …).
 *
 * @example
 * // `suspended` is what runTurn returned (status 'suspended'), or JSON.parse of it in another process.
 * const result = await resumeTurn({ ...suspended, model, tools, decisions: { call_1: { type: 'approve' } } });
 */
export async function resumeTurn(options: ResumeTurnOptions, handlers: EffectHandlers = defaultHandlers): Promise<TurnResult> {
  checkCommon(options, 'resumeTurn');
  if (!Array.isArray(options.transcript))
    throw new TypeError('resumeTurn needs the `transcript` of the suspended result (an array of messages).');
  if (options.sealSecret !== undefined)
    await verifySeal(
      sealedParts(options.state, options.transcript, options.grants, options.budgetUsage),
      options.seal,
      options.sealSecret,
    );
  const saved = parseTurnState(options.state);
  // The retry options set the resumed turn's retry limits (validated with the rest of the state).
  const retryLimits = withRetryOptions(undefined, options, 'resumeTurn');
  const state = retryLimits === undefined ? saved : parseTurnState({ ...saved, limits: { ...saved.limits, ...retryLimits } });
  if (state.status === 'ready')
    throw new TypeError(`resumeTurn got turn '${state.id}' that never started; start it with runTurn.`);
  const scope = { turnId: state.id, ...definedProps({ session: options.session }) };
  const dispatcher = dispatcherMaker(options, 'resumeTurn')();
  for (const grant of options.grants ?? []) dispatcher.grant(grant, scope);
  checkToolSelection(options, dispatcher, 'resumeTurn');
  const transcript = startTranscript(options.system, options.transcript);
  const decisions = options.decisions ?? {};
  if (state.status === 'awaiting_approval') {
    const event: TurnEvent | null = Object.keys(decisions).length > 0 ? { type: 'approvals_decided', decisions } : null;
    return drive(options, dispatcher, transcript, state, event, handlers);
  }
  // Any other persisted status: core re-issues what was in flight (tools are never re-run).
  const [resumed, effects] = resume(state);
  return drive(options, dispatcher, transcript, resumed, effects, handlers);
}

export async function drive(
  options: DriveOptions,
  dispatcher: Dispatcher,
  transcript: Message[],
  state: TurnState,
  first: TurnEvent | null | readonly Effect[],
  handlers: EffectHandlers,
): Promise<TurnResult> {
  // The turn's AbortSignal is made only if a handler, model, tool or hook reads it (see TurnContext).
  const outer = options.signal;
  const cancellation = newTurnCancellation(outer !== undefined);
  const forward = (): void => cancellation.abort(outer?.reason);
  if (outer?.aborted === true) forward();
  else outer?.addEventListener('abort', forward, { once: true });

  const entries: StepRecord[] = [];
  const onStep =
    options.trace === true
      ? (record: StepRecord): void => {
          entries.push(record);
          options.onStep?.(record);
        }
      : options.onStep;
  const ctx = new TurnContext(
    state.id,
    options.model,
    dispatcher,
    transcript,
    cancellation,
    outer !== undefined,
    options,
    onStep,
  );

  let start: TurnState = state;
  let effects: readonly Effect[] = [];
  if (Array.isArray(first)) effects = first as readonly Effect[];
  else if (first !== null) {
    const event = first as TurnEvent;
    [start, effects] = step(state, event);
    recordTaken(dispatcher, state, event, { turnId: state.id, ...definedProps({ session: options.session }) });
    try {
      ctx.onStep?.({ event, state: start, effects });
    } catch {
      // Observers must not break a turn (as in the driver).
    }
  }
  try {
    const { state: end, outcome } = await driveTurn(start, effects, ctx, handlers);
    const scope = { turnId: state.id, ...definedProps({ session: options.session }) };
    const result = toResult(
      end,
      outcome,
      transcript,
      dispatcher,
      scope,
      options.trace === true ? { initial: state, entries } : undefined,
    );
    return options.sealSecret === undefined ? result : await sealResult(result, options.sealSecret);
  } finally {
    // Stop anything a handler left running (a model that lost a race with the cancel, say). A turn
    // without a caller's signal raced nothing: every handler it started has finished, and aborting
    // a signal someone read (an Event dispatched to its listeners) would be work for no one.
    if (outer !== undefined) {
      outer.removeEventListener('abort', forward);
      cancellation.abort('the turn has ended');
    } else spareAfterTurn(cancellation);
  }
}

function toResult(
  state: TurnState,
  outcome: TurnState['outcome'],
  transcript: readonly Message[],
  dispatcher: Dispatcher,
  scope: GrantScope,
  trace: TurnResult['trace'],
): TurnResult {
  let last: Message | undefined;
  for (let i = transcript.length - 1; i >= 0 && last === undefined; i--)
    if (transcript[i]?.role === 'assistant') last = transcript[i];
  const text = last?.role === 'assistant' ? last.content : '';
  // The common end, written out: spreading `base` into each shape is a slow generic copy.
  if (trace === undefined && outcome?.status === 'stopped') {
    return {
      text,
      usage: state.usage,
      state,
      transcript,
      status: 'stopped',
      output: outcome.output,
      stopReason: outcome.stopReason,
      outcome,
    };
  }
  const base = { text, usage: state.usage, state, transcript, ...definedProps({ trace }) };
  if (outcome === null) {
    return {
      ...base,
      status: 'suspended',
      output: null,
      pending: undecided(state),
      grants: [...dispatcher.grants(scope)],
      budgetUsage: dispatcher.budgetUsage(),
    };
  }
  switch (outcome.status) {
    case 'stopped':
      return { ...base, status: 'stopped', output: outcome.output, stopReason: outcome.stopReason, outcome };
    case 'failed':
      return { ...base, status: 'failed', output: null, error: outcome.error, outcome };
    case 'cancelled':
      return { ...base, status: 'cancelled', output: null, reason: outcome.reason, outcome };
  }
}

export function checkCommon(options: RunTurnOptions | ResumeTurnOptions, fn: string): void {
  if (options === null || typeof options !== 'object')
    throw new TypeError(`${fn} needs an options object with at least a model.`);
  if (options.model === null || typeof options.model !== 'object' || typeof options.model.generate !== 'function') {
    throw new TypeError(`${fn} option \`model\` must be a Model with a generate(request, { signal }) method.`);
  }
  if (options.transcript !== undefined && !Array.isArray(options.transcript))
    throw new TypeError(`${fn} option \`transcript\` must be an array of messages.`);
  if (options.system !== undefined && typeof options.system !== 'string')
    throw new TypeError(`${fn} option \`system\` must be a string.`);
  const context: unknown = options.context;
  if (
    context !== undefined &&
    (context === null || typeof context !== 'object' || Array.isArray(context) || !isJsonValue(context))
  )
    throw new TypeError(`${fn} option \`context\` must be a JSON object, like { sessionId, userId, cwd }.`);
  const retries: unknown = options.maxModelRetries;
  if (retries !== undefined && (typeof retries !== 'number' || !Number.isInteger(retries) || retries < 0)) {
    throw new TypeError(`${fn} option \`maxModelRetries\` must be a whole number >= 0, got ${String(retries)}.`);
  }
  const backoff: unknown = options.modelRetryBackoffMs;
  if (backoff !== undefined && (typeof backoff !== 'number' || !Number.isSafeInteger(backoff) || backoff < 0)) {
    throw new TypeError(
      `${fn} option \`modelRetryBackoffMs\` must be a whole number of milliseconds >= 0, got ${String(backoff)}.`,
    );
  }
  const output: unknown = options.output;
  if (output !== undefined && output !== null && typeof (output as { safeParse?: unknown }).safeParse !== 'function') {
    throw new TypeError(`${fn} option \`output\` must be a zod schema (anything with safeParse).`);
  }
}

/** `selectTools` is a function and `alwaysOffer` names defined tools. */
export function checkToolSelection(options: RunTurnOptions | ResumeTurnOptions, dispatcher: Dispatcher, fn: string): void {
  const select: unknown = options.selectTools;
  if (select !== undefined && typeof select !== 'function') {
    throw new TypeError(`${fn} option \`selectTools\` must be a function (info) => tool names, got ${typeof select}.`);
  }
  const always: unknown = options.alwaysOffer;
  if (always === undefined) return;
  if (!Array.isArray(always) || always.some((name) => typeof name !== 'string')) {
    throw new TypeError(`${fn} option \`alwaysOffer\` must be an array of tool names.`);
  }
  const known = new Set(dispatcher.toolSpecs().map((spec) => spec.name));
  const unknown = (always as string[]).filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new TypeError(
      `${fn} option \`alwaysOffer\` names ${unknown.map((n) => `'${n}'`).join(', ')}, not defined tools (the tools: ${[...known].map((n) => `'${n}'`).join(', ') || 'none'}).`,
    );
  }
}

function isDispatcher(tools: RunTurnOptions['tools']): tools is Dispatcher {
  return tools !== undefined && !Array.isArray(tools) && typeof (tools as Dispatcher).dispatch === 'function';
}

/**
/**
 * What makes the dispatcher of each turn from `tools`, checked once: a dispatcher passed as `tools`
 * serves every turn; a list of definitions gets a fresh dispatcher per turn from one checked
 * configuration, with the budget counts given. A suspended turn's grants are restored by the
 * caller into its turn (or session), never for every turn.
 */
export function dispatcherMaker(
  options: Pick<RunTurnOptions, 'tools' | 'policy' | 'permissions' | 'hooks' | 'wrapExecution' | 'defaultDecision' | 'yolo'> &
    Pick<Partial<ResumeTurnOptions>, 'budgetUsage'>,
  fn: string,
): () => Dispatcher {
  const tools = options.tools ?? [];
  if (isDispatcher(tools)) {
    const given = (['policy', 'permissions', 'hooks', 'wrapExecution', 'defaultDecision', 'yolo'] as const).filter(
      (key) => options[key] !== undefined,
    );
    if (given.length > 0) {
      throw new TypeError(
        `${fn}: pass ${given.join(', ')} to createDispatcher when \`tools\` is already a dispatcher (it was made without them).`,
      );
    }
    return () => tools;
  }
  if (!Array.isArray(tools))
    throw new TypeError(
      `${fn} option \`tools\` must be an array of tool definitions (defineTool) or a dispatcher (createDispatcher).`,
    );
  return dispatcherFactory({
    tools,
    ...definedProps({ policy: options.policy }),
    ...definedProps({ permissions: options.permissions }),
    ...definedProps({ hooks: options.hooks }),
    ...definedProps({ wrapExecution: options.wrapExecution }),
    ...definedProps({ defaultDecision: options.defaultDecision }),
    ...definedProps({ yolo: options.yolo }),
    ...definedProps({ budgetUsage: options.budgetUsage }),
  });
}

/** What a seal covers: everything of a suspended result that a resume trusts. */
function sealedParts(state: unknown, transcript: unknown, grants: unknown, budgetUsage: unknown): JsonValue {
  return JSON.parse(JSON.stringify({ state, transcript, grants: grants ?? [], budgetUsage: budgetUsage ?? null })) as JsonValue;
}

/** A suspended result with its seal; other results as they are. */
async function sealResult(result: TurnResult, secret: string | Uint8Array): Promise<TurnResult> {
  if (result.status !== 'suspended') return result;
  const seal = await sealParts(sealedParts(result.state, result.transcript, result.grants, result.budgetUsage), secret);
  return { ...result, seal };
}

/**
 * The options `maxModelRetries` and `modelRetryBackoffMs` are the limits of the same names (core
 * decides retries). Setting one both ways is an error, so no value silently wins.
 */
export function withRetryOptions(
  limits: TurnLimitsInput | undefined,
  options: RunTurnOptions | ResumeTurnOptions,
  fn: string,
): TurnLimitsInput | undefined {
  let out = limits;
  for (const key of ['maxModelRetries', 'modelRetryBackoffMs'] as const) {
    const value = options[key];
    if (value === undefined) continue;
    if (limits?.[key] !== undefined)
      throw new TypeError(`${fn}: \`${key}\` is set both as an option and in \`limits\`; set it once, in \`limits.${key}\`.`);
    out = { ...out, [key]: value };
  }
  return out;
}

/** The dispatcher's loop-exempt tools join `limits.loopExemptTools`. */
export function mergeExempt(limits: TurnLimitsInput | undefined, dispatcher: Dispatcher): TurnLimitsInput | undefined {
  const exempt = dispatcher.loopExemptTools();
  if (exempt.length === 0) return limits;
  const names = new Set([...(limits?.loopExemptTools ?? []), ...exempt]);
  return { ...limits, loopExemptTools: [...names] };
}

export function startTranscript(system: string | undefined, earlier: readonly Message[]): Message[] {
  const first = earlier[0];
  if (system === undefined || (first?.role === 'system' && first.content === system)) return [...earlier];
  return [{ role: 'system', content: system }, ...earlier];
}
