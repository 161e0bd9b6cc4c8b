// The retry policy: which failures of a tool are tried again, how often, and after what wait.
// Decided per error kind, from the tool's own `retryPolicy`, else the dispatcher's, else the
// defaults below. Pure functions: stage 7 (stages/execute.ts) asks them after each failed try.

import { kindOf, type ToolErrorKind } from './errors.js';

/** How one kind of failure is retried. */
export interface KindRetry {
  /** Total tries, the first included (`attempts: 3` = up to two retries). Integer ≥ 1. */
  readonly attempts: number;
  /** The wait before retry n (n = 1, 2, …) is `backoffMs * 2 ** (n - 1)`, at most `maxBackoffMs`. */
  readonly backoffMs: number;
  /** Cap of one wait. Default 30000. */
  readonly maxBackoffMs?: number;
}

/** The kinds a policy can retry. `permission` and the kinds of calls that never ran are never retried. */
export type RetryableKind = 'transient' | 'rate_limited' | 'timeout' | 'tool_error';

/**
 * Retries by error kind: a `KindRetry`, or `false` for never. `timeout` may be set on a tool only
 * (a timeout is retried only when the tool opts in, and then each try gets the whole `timeoutMs`).
 */
export type RetryPolicy = { readonly [K in RetryableKind]?: KindRetry | false };

/** What happens without any policy: passing failures are retried, everything else is not. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  transient: Object.freeze({ attempts: 3, backoffMs: 200, maxBackoffMs: 5000 }),
  rate_limited: Object.freeze({ attempts: 3, backoffMs: 1000, maxBackoffMs: 30_000 }),
});

const RETRYABLE: ReadonlySet<string> = new Set<RetryableKind>(['transient', 'rate_limited', 'timeout', 'tool_error']);
const DEFAULT_MAX_BACKOFF_MS = 30_000;

/**
 * Checks a `retryPolicy` (of a tool when `onTool`, else of the dispatcher) and returns it frozen,
 * or what is wrong with it as text to follow `retryPolicy` (` must be …`, `.transient.attempts …`).
 */
export function checkRetryPolicy(value: unknown, onTool: boolean): RetryPolicy | string {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return ' must be an object by error kind, like { transient: { attempts: 3, backoffMs: 200 } }';
  const out: Record<string, KindRetry | false> = {};
  for (const [kind, entry] of Object.entries(value)) {
    if (kind === 'permission') return '.permission cannot be retried: a missing permission does not come back by trying again';
    if (!RETRYABLE.has(kind))
      return `.${kind.slice(0, 40)} is not a kind a policy retries (those are ${[...RETRYABLE].join(', ')})`;
    if (kind === 'timeout' && !onTool)
      return '.timeout can be set on a tool only: a timeout is retried only for a tool that opts in';
    if (entry === false) {
      out[kind] = false;
      continue;
    }
    const problem = kindRetryProblem(entry);
    if (problem !== undefined) return `.${kind}${problem}`;
    out[kind] = Object.freeze({ ...(entry as KindRetry) });
  }
  return Object.freeze(out) as RetryPolicy;
}

function kindRetryProblem(entry: unknown): string | undefined {
  if (entry === null || typeof entry !== 'object') return ' must be { attempts, backoffMs, maxBackoffMs? } or false';
  const { attempts, backoffMs, maxBackoffMs, ...rest } = entry as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length > 0)
    return ` has an unknown key '${String(extra[0]).slice(0, 40)}' (known: attempts, backoffMs, maxBackoffMs)`;
  if (typeof attempts !== 'number' || !Number.isInteger(attempts) || attempts < 1)
    return `.attempts must be a whole number >= 1 (total tries), got ${String(attempts)}`;
  for (const [name, ms] of [
    ['backoffMs', backoffMs],
    ['maxBackoffMs', maxBackoffMs],
  ] as const) {
    if (ms === undefined && name === 'maxBackoffMs') continue;
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)
      return `.${name} must be a number of milliseconds >= 0, got ${String(ms)}`;
  }
  return undefined;
}

/** The tool's policy for `kind`, else the dispatcher's, else the default; `undefined`: not retried. */
export function retryFor(kind: ToolErrorKind, tool: RetryPolicy | undefined, dispatcher: RetryPolicy): KindRetry | undefined {
  if (!RETRYABLE.has(kind)) return undefined;
  const k = kind as RetryableKind;
  const chosen = tool?.[k] ?? (k === 'timeout' ? undefined : (dispatcher[k] ?? DEFAULT_RETRY_POLICY[k]));
  return chosen === false ? undefined : chosen;
}

/**
 * The wait before try `attempt + 1` after a failure, or `undefined` when it is not retried:
 * `backoffMs * 2 ** (attempt - 1)` capped at `maxBackoffMs`, and never less than a `ToolError`'s
 * `retryAfterMs` (a rate limit is waited out even past the cap).
 */
export function nextWait(retry: KindRetry | undefined, attempt: number, error: unknown): number | undefined {
  if (retry === undefined || attempt >= retry.attempts) return undefined;
  // 2 ** n overflows to Infinity for large n, and 0 * Infinity is NaN.
  const doubled = retry.backoffMs === 0 ? 0 : retry.backoffMs * 2 ** (attempt - 1);
  const backoff = Math.min(doubled, retry.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS);
  return Math.max(backoff, kindOf(error).retryAfterMs ?? 0);
}
