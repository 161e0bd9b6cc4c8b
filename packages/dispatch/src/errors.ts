// Error kinds: every error result the dispatcher writes says what kind of failure it was, so a
// program (a retry policy, a UI, a trace) can act on it without reading the text. A tool names
// its own kind by throwing a `ToolError`.

/**
 * What kind of failure an error result reports. Stable strings, kept in `ToolResult.errorKind`:
 *
 * - `invalid_input`: the arguments were not valid JSON or did not match the tool's schema.
 * - `unknown_tool`: no tool has the name the model asked for.
 * - `denied`: a rule, a policy, a before-hook or a person refused the call.
 * - `timeout`: the call ran past its deadline.
 * - `cancelled`: the turn (or its tool batch) was cancelled before the call finished.
 * - `transient`: a passing failure (a dropped connection, a 503); worth retrying after a wait.
 * - `rate_limited`: the service behind the tool asked to slow down; retried after its `retryAfterMs`.
 * - `permission`: the tool lacks a permission (a 403, EACCES); never retried.
 * - `tool_error`: the tool failed in another way (the default for anything a tool throws).
 * - `interrupted`: the process stopped while the call ran; it was not run again.
 * - `budget`: a tool-call budget was used up, so the call did not run.
 * - `not_executed`: the call did not run for another reason the text gives (a repeated batch, too many calls in one reply).
 * - `invalid_output`: the tool returned a value that is not JSON.
 * - `withheld`: an after-hook failed, so the output is withheld (the tool did run).
 * - `internal`: the dispatcher itself failed, or its caller passed an unreadable context.
 */
export type ToolErrorKind =
  | 'invalid_input'
  | 'unknown_tool'
  | 'denied'
  | 'timeout'
  | 'cancelled'
  | 'transient'
  | 'rate_limited'
  | 'permission'
  | 'tool_error'
  | 'interrupted'
  | 'budget'
  | 'not_executed'
  | 'invalid_output'
  | 'withheld'
  | 'internal';

/** Every `ToolErrorKind`, in the order the docs list them. */
export const TOOL_ERROR_KINDS: readonly ToolErrorKind[] = Object.freeze([
  'invalid_input',
  'unknown_tool',
  'denied',
  'timeout',
  'cancelled',
  'transient',
  'rate_limited',
  'permission',
  'tool_error',
  'interrupted',
  'budget',
  'not_executed',
  'invalid_output',
  'withheld',
  'internal',
]);

const KINDS: ReadonlySet<string> = new Set(TOOL_ERROR_KINDS);

/** True when `value` is one of the `ToolErrorKind` strings. */
export function isToolErrorKind(value: unknown): value is ToolErrorKind {
  return typeof value === 'string' && KINDS.has(value);
}

/** The options of a `ToolError`. */
export interface ToolErrorOptions {
  /** Default `tool_error`. */
  readonly kind?: ToolErrorKind;
  /** For `rate_limited` (or `transient`): wait at least this long before the next try. Milliseconds ≥ 0. */
  readonly retryAfterMs?: number;
  /** The underlying error, kept as the `ToolError`'s `cause`. */
  readonly cause?: unknown;
}

/**
 * Thrown by a tool to say what kind of failure it was. The dispatcher turns it into an error result
 * with that `errorKind`, and its retry policy decides by the kind whether (and when) to try again.
 * A bad `kind` or `retryAfterMs` throws a `TypeError` where the `ToolError` is made.
 *
 * @example
 * if (response.status === 429)
 *   throw new ToolError('The search service is busy.', { kind: 'rate_limited', retryAfterMs: 2000 });
 */
export class ToolError extends Error {
  /** What kind of failure it was: the error result's `errorKind`. */
  readonly kind: ToolErrorKind;
  /** The least wait before the next try, in ms, when the tool said so. */
  readonly retryAfterMs: number | undefined;

  constructor(message: string, options?: ToolErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    const kind = options?.kind ?? 'tool_error';
    if (!isToolErrorKind(kind))
      throw new TypeError(`ToolError: kind must be one of ${TOOL_ERROR_KINDS.join(', ')}, got ${JSON.stringify(String(kind))}.`);
    const after = options?.retryAfterMs;
    if (after !== undefined && (typeof after !== 'number' || !Number.isFinite(after) || after < 0))
      throw new TypeError(`ToolError: retryAfterMs must be a number of milliseconds >= 0, got ${String(after)}.`);
    this.name = 'ToolError';
    this.kind = kind;
    this.retryAfterMs = after;
  }
}

/** The kind and retry-after of a thrown value: a `ToolError`'s own (also from another copy of this package), else `tool_error`. Never throws. */
export function kindOf(error: unknown): { readonly kind: ToolErrorKind; readonly retryAfterMs: number | undefined } {
  try {
    if (error instanceof ToolError) return { kind: error.kind, retryAfterMs: error.retryAfterMs };
    const e = error as { name?: unknown; kind?: unknown; retryAfterMs?: unknown } | null;
    if (e !== null && typeof e === 'object' && e.name === 'ToolError' && isToolErrorKind(e.kind)) {
      const after = e.retryAfterMs;
      return {
        kind: e.kind,
        retryAfterMs: typeof after === 'number' && Number.isFinite(after) && after >= 0 ? after : undefined,
      };
    }
  } catch {
    // A thrown value whose fields throw when read is an ordinary tool error.
  }
  return { kind: 'tool_error', retryAfterMs: undefined };
}
