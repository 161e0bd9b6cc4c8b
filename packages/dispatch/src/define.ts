// Tool definitions: `defineTool` checks a definition once, at definition time, so a mistake in a
// tool is a thrown error naming the tool while the program starts, never a surprise mid-turn.

import type { JsonObject } from '@turnkit/core/internal';
import * as z from 'zod';
// Public types use zod 4's core types, which every zod 4 release (and zod/mini) shares, so a tool
// written against any zod 4 minor type-checks here.
import type * as zc from 'zod/v4/core';
import { definedProps } from '@turnkit/core/internal';
import { checkRetryPolicy, type RetryPolicy } from './retry.js';

/** What a running tool gets besides its input. */
export interface ToolContext {
  /** Aborts when the turn is cancelled or the call times out. */
  readonly signal: AbortSignal;
  /** The id of the call being run (`ToolCall.id`): a key for idempotency or logs. */
  readonly callId: string;
  /** The turn the call belongs to. */
  readonly turnId: string;
}

/**
 * Retries for thrown errors that `retryOn` accepts (before the retry policy by kind). Cancellations
 * are never retried; all tries share the tool's `timeoutMs`.
 */
export interface RetryOptions {
  /** Total tries, the first included (`attempts: 3` = up to two retries). Integer ≥ 1. */
  readonly attempts: number;
  /** Wait before retry n (n = 1, 2, …) is `backoffMs * 2 ** (n - 1)`, and at least one macrotask even when 0. */
  readonly backoffMs: number;
  /** Which errors to retry; default: none. A `retryOn` that throws means "do not retry". */
  readonly retryOn?: (error: unknown) => boolean;
}

/** What `defineTool` accepts. */
export interface ToolConfig<Schema extends zc.$ZodType> {
  /** The name the model calls: 1 to 64 letters, digits, `_` or `-`, unique in a dispatcher. */
  readonly name: string;
  /** What the tool does and when to use it, for the model. */
  readonly description: string;
  /**
   * A zod 4 object schema of the input: the model is offered its JSON Schema, and every call is validated by it before
   * anything else.
   */
  readonly input: Schema;
  /**
   * Runs the call with the validated input; return any JSON-serialisable value. A thrown error becomes an error result
   * (a `ToolError` sets its kind); honour `ctx.signal`.
   */
  execute(input: zc.output<Schema>, ctx: ToolContext): unknown;
  /** One deadline for the whole call, every try and every wait between tries included; defaults to the dispatcher's `defaultTimeoutMs`. */
  readonly timeoutMs?: number;
  /**
   * How long a person has to decide a parked call of this tool (ms); then it is rejected as expired.
   * Defaults to the dispatcher's `approvalTimeoutMs` (none: a parked call waits until decided).
   */
  readonly approvalTimeoutMs?: number;
  /** The tool changes nothing: a call no rule decided runs without asking (others ask by default). Default false. */
  readonly readOnly?: boolean;
  /**
   * Every call (true), or each call for which the function returns true, waits for a person's approval; deny rules
   * still win. Default false.
   */
  readonly needsApproval?: boolean | ((input: zc.output<Schema>) => boolean);
  /** Retries of thrown errors that `retryOn` accepts. Default none. */
  readonly retry?: RetryOptions;
  /**
   * Retries by error kind for this tool, over the dispatcher's `retryPolicy` and the defaults
   * (`transient` and `rate_limited` retried). Only a tool can opt in to retrying `timeout`.
   */
  readonly retryPolicy?: RetryPolicy;
  /**
   * Coerce an input that fails validation towards the schema (`"42"` → 42, `"true"` → true) and
   * validate it again, for models that quote everything. Default: the dispatcher's `coerce` (off).
   */
  readonly coerce?: boolean;
  /** Run the next model call on this model (once) after this tool ran. */
  readonly model?: string;
  /** Calls of this tool neither count towards nor reset loop detection. */
  readonly loopExempt?: boolean;
  /**
   * Running a call twice has the same effect as running it once. A durable worker
   * (`@turnkit/store`) runs such a call again when its process died mid-call, instead of
   * answering it `interrupted`. Default false.
   */
  readonly idempotent?: boolean;
}

/** A checked tool, as `defineTool` returns it. */
export interface ToolDefinition<Input = unknown> {
  /** The name the model calls. */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** The zod schema every call's input is validated by. */
  readonly input: zc.$ZodType<Input>;
  /** `z.toJSONSchema(input, { io: 'input' })`, computed once at definition time. */
  readonly inputSchema: JsonObject;
  /** Runs one call (the dispatcher calls it; call `dispatch` rather than this). */
  execute(input: Input, ctx: ToolContext): unknown;
  /** Deadline of a call, every try included, in ms; absent: the dispatcher's `defaultTimeoutMs`. */
  readonly timeoutMs?: number;
  /** How long a person has to decide a parked call of this tool, in ms; absent: the dispatcher's `approvalTimeoutMs`. */
  readonly approvalTimeoutMs?: number;
  /** The tool changes nothing: a call no rule decided runs without asking. */
  readonly readOnly: boolean;
  /** Calls that wait for a person's approval: all (true), none (false) or those the function picks. */
  readonly needsApproval: boolean | ((input: Input) => boolean);
  /** Retries of thrown errors that `retryOn` accepts. */
  readonly retry?: RetryOptions;
  /** Retries by error kind for this tool, over the dispatcher's. */
  readonly retryPolicy?: RetryPolicy;
  /** Absent: the dispatcher's `coerce` decides. */
  readonly coerce?: boolean;
  /** The next model call runs on this model (once) after this tool ran. */
  readonly model?: string;
  /** Calls of this tool neither count towards nor reset loop detection. */
  readonly loopExempt: boolean;
  /**
   * Running a call twice has the effect of running it once: a durable worker runs it again after a crash instead of
   * answering `interrupted`.
   */
  readonly idempotent: boolean;
}

/**
 * Why `value` is not a zod 4 schema (a sentence about `what`), or undefined when it is one. A zod 4
 * schema (classic or mini, any minor, any copy of the package) carries `_zod`; a zod 3 schema has
 * `_def` and no `_zod`.
 */
export function zodSchemaProblem(value: unknown, what: string): string | undefined {
  if (value !== null && (typeof value === 'object' || typeof value === 'function')) {
    const internals = (value as { _zod?: unknown })._zod;
    if (internals !== null && typeof internals === 'object') return undefined;
    if ('_def' in value)
      return `zod 4 is required: this schema (${what}) comes from zod 3 (it has _def but no _zod); install zod@^4 and build ${what} with it.`;
  }
  return `${what} must be a zod schema, like z.object({ query: z.string() }).`;
}

export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const KNOWN_KEYS = new Set([
  'name',
  'description',
  'input',
  'execute',
  'timeoutMs',
  'approvalTimeoutMs',
  'readOnly',
  'needsApproval',
  'retry',
  'retryPolicy',
  'coerce',
  'model',
  'loopExempt',
  'idempotent',
]);

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1;
}

/** What a tool's input JSON Schema describes, for the error when it is not an object. */
function describeSchema(schema: JsonObject): string {
  const type = schema['type'];
  if (type !== undefined) return `of type ${JSON.stringify(type)}`;
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    if (schema[key] !== undefined) return `a combination (${key}) with no type of its own`;
  }
  return 'without a type (it accepts any value)';
}

/**
 * Defines a tool. Throws a `TypeError` naming the tool when the definition is invalid (bad name,
 * input not a zod schema, not representable as JSON Schema or not an object schema, bad timeout
 * or retry).
 *
 * @example
 * const add = defineTool({
 *   name: 'add',
 *   description: 'Adds two numbers.',
 *   input: z.object({ a: z.number(), b: z.number() }),
 *   execute: ({ a, b }) => a + b,
 * });
 */
export function defineTool<Schema extends zc.$ZodType>(config: ToolConfig<Schema>): ToolDefinition<zc.output<Schema>> {
  if (config === null || typeof config !== 'object')
    throw new TypeError('defineTool needs a definition object with name, description, input and execute.');
  const name: unknown = config.name;
  if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
    throw new TypeError(
      `Tool name ${JSON.stringify(String(name)).slice(0, 90)} is invalid: use 1 to 64 letters, digits, '_' or '-'.`,
    );
  }
  const fail = (what: string): never => {
    throw new TypeError(`Tool '${name}': ${what}`);
  };
  for (const key of Object.keys(config)) {
    if (!KNOWN_KEYS.has(key)) fail(`unknown option '${key}'. Known options: ${[...KNOWN_KEYS].join(', ')}.`);
  }
  if (typeof config.description !== 'string') fail('description must be a string that tells the model what the tool does.');
  const schemaProblem = zodSchemaProblem(config.input, 'input');
  if (schemaProblem !== undefined) fail(schemaProblem);
  if (typeof config.execute !== 'function') fail('execute must be a function (input, ctx) => result.');
  if (config.timeoutMs !== undefined && !isPositiveInteger(config.timeoutMs))
    fail(`timeoutMs must be a whole number of milliseconds ≥ 1, got ${String(config.timeoutMs)}.`);
  if (config.approvalTimeoutMs !== undefined && !isPositiveInteger(config.approvalTimeoutMs))
    fail(`approvalTimeoutMs must be a whole number of milliseconds ≥ 1, got ${String(config.approvalTimeoutMs)}.`);
  if (config.readOnly !== undefined && typeof config.readOnly !== 'boolean') fail('readOnly must be a boolean.');
  if (config.loopExempt !== undefined && typeof config.loopExempt !== 'boolean') fail('loopExempt must be a boolean.');
  if (config.idempotent !== undefined && typeof config.idempotent !== 'boolean') fail('idempotent must be a boolean.');
  if (config.coerce !== undefined && typeof config.coerce !== 'boolean') fail('coerce must be a boolean.');
  if (
    config.needsApproval !== undefined &&
    typeof config.needsApproval !== 'boolean' &&
    typeof config.needsApproval !== 'function'
  ) {
    fail('needsApproval must be a boolean or a function (input) => boolean.');
  }
  if (config.model !== undefined && (typeof config.model !== 'string' || config.model === ''))
    fail('model must be a non-empty model id.');
  const retry = config.retry;
  if (retry !== undefined) {
    if (retry === null || typeof retry !== 'object') fail('retry must be an object { attempts, backoffMs, retryOn? }.');
    if (!isPositiveInteger(retry.attempts))
      fail(`retry.attempts must be a whole number ≥ 1 (total tries), got ${String(retry.attempts)}.`);
    if (typeof retry.backoffMs !== 'number' || !Number.isFinite(retry.backoffMs) || retry.backoffMs < 0) {
      fail(`retry.backoffMs must be a number of milliseconds ≥ 0, got ${String(retry.backoffMs)}.`);
    }
    if (retry.retryOn !== undefined && typeof retry.retryOn !== 'function')
      fail('retry.retryOn must be a function (error) => boolean.');
  }
  let retryPolicy: RetryPolicy | undefined;
  if (config.retryPolicy !== undefined) {
    const checked = checkRetryPolicy(config.retryPolicy, true);
    if (typeof checked === 'string') fail(`retryPolicy${checked}.`);
    retryPolicy = checked as RetryPolicy;
  }
  let inputSchema: JsonObject;
  try {
    inputSchema = z.toJSONSchema(config.input, { io: 'input' }) as JsonObject;
  } catch (error) {
    return fail(
      `input cannot be written as JSON Schema for the model (${error instanceof Error ? error.message : String(error)}). Use JSON-friendly types (no z.date(), z.bigint(), …).`,
    );
  }
  if (inputSchema['type'] !== 'object') {
    fail(
      `input must be an object schema, but its JSON Schema is ${describeSchema(inputSchema)}: model providers require tool inputs to be JSON objects. ` +
        'Wrap the value in an object, like z.object({ value: z.string() }), and read input.value in execute.',
    );
  }
  return {
    name,
    description: config.description,
    // The schema is unchanged; TS cannot see that a `Schema` parses to `zc.output<Schema>`.
    input: config.input as unknown as zc.$ZodType<zc.output<Schema>>,
    inputSchema,
    execute: config.execute,
    ...definedProps({ timeoutMs: config.timeoutMs }),
    ...definedProps({ approvalTimeoutMs: config.approvalTimeoutMs }),
    readOnly: config.readOnly ?? false,
    needsApproval: config.needsApproval ?? false,
    ...definedProps({ retry }),
    ...definedProps({ retryPolicy }),
    ...definedProps({ coerce: config.coerce }),
    ...definedProps({ model: config.model }),
    loopExempt: config.loopExempt ?? false,
    idempotent: config.idempotent ?? false,
  };
}
