// The options of a turn, checked once, and what is built from them: the dispatcher maker, the
// limits (retry options and the dispatcher's loop-exempt tools included), the starting transcript.

import type { Message, TurnLimitsInput } from '@turnkit/core';
import { definedProps, isJsonValue } from '@turnkit/core/internal';
import type { Dispatcher } from '@turnkit/dispatch';
import { dispatcherFactory } from '@turnkit/dispatch/internal';
import type { ResumeTurnOptions, RunTurnOptions } from './types.js';

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

/** The transcript a turn starts from: the earlier messages, after the system message unless they start with it. */
export function startTranscript(system: string | undefined, earlier: readonly Message[]): Message[] {
  const first = earlier[0];
  if (system === undefined || (first?.role === 'system' && first.content === system)) return [...earlier];
  return [{ role: 'system', content: system }, ...earlier];
}
