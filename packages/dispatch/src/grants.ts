// Remembered "approve and remember" decisions: the only state the policy stage reads besides the
// configuration. Every grant is checked when added; a list never holds the same grant twice.
//
// A grant covers exactly what was approved: a tool grant names one tool (never a glob), and a
// pattern grant covers a call only when its tool is the pattern's tool and every argument of the
// input is named by one of its conditions (an argument the person never saw is not approved).
// Grants a person gives belong to one turn, or to the session the caller names; only the grants
// of the dispatcher's options (and `grant` without a scope) apply to every turn.

import { TOOL_NAME } from './define.js';
import { matchesPattern, parsePattern, type Pattern } from './patterns.js';
import type { Grant, GrantScope } from './types.js';

/** A copy of `grant` if it is a valid grant; else a TypeError showing the value and the valid forms. */
export function checkGrant(grant: unknown): Grant {
  const g = grant as Record<string, unknown> | null;
  if (g !== null && typeof g === 'object') {
    if (g['scope'] === 'session' && Object.keys(g).length === 1) return { scope: 'session' };
    if (g['scope'] === 'tool' && Object.keys(g).length === 2) {
      if (typeof g['tool'] === 'string' && TOOL_NAME.test(g['tool'])) return { scope: 'tool', tool: g['tool'] };
      if (typeof g['pattern'] === 'string' && TOOL_NAME.test(parsePattern(g['pattern']).tool))
        return { scope: 'tool', pattern: g['pattern'] };
    }
  }
  let shown: string;
  try {
    shown = JSON.stringify(grant)?.slice(0, 200) ?? String(grant);
  } catch {
    shown = 'an unreadable value';
  }
  throw new TypeError(
    `Grant ${shown} is invalid: use { scope: 'session' }, { scope: 'tool', tool: 'name' } or { scope: 'tool', pattern: 'tool:arg=glob' } (a grant names its tool exactly, no wildcards).`,
  );
}

/** The grants of one dispatcher, in the order they were added. */
export class GrantList {
  readonly #grants: { readonly grant: Grant; readonly key: string; readonly pattern?: Pattern }[] = [];

  /** Adds `grant` (checked first) unless an equal one is already there. Throws a TypeError on a malformed grant. */
  add(grant: unknown): void {
    const checked = checkGrant(grant);
    const key = JSON.stringify(checked);
    if (this.#grants.some((g) => g.key === key)) return;
    this.#grants.push(
      'pattern' in checked ? { grant: checked, key, pattern: parsePattern(checked.pattern) } : { grant: checked, key },
    );
  }

  /** Copies of the grants, plain JSON. */
  list(): Grant[] {
    return this.#grants.map((g) => ({ ...g.grant }));
  }

  /** The first grant that covers a call of `tool` with exactly this (validated) input. */
  match(tool: string, input: unknown): Grant | undefined {
    for (const { grant, pattern } of this.#grants) {
      if (grant.scope === 'session') return grant;
      if ('tool' in grant && grant.tool.toLowerCase() === tool.toLowerCase()) return grant;
      if (pattern !== undefined && coversEveryArgument(pattern, input) && matchesPattern(pattern, tool, input)) return grant;
    }
    return undefined;
  }
}

/** True when every key of the input is an argument the pattern names (case-insensitively). */
function coversEveryArgument(pattern: Pattern, input: unknown): boolean {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return false;
  return Object.keys(input).every((key) => pattern.args.some((condition) => condition.arg === key.toLowerCase()));
}

/** At most this many turns and sessions keep grants; the oldest are forgotten first. */
export const MAX_GRANT_SCOPES = 10_000;

function scopeKey(scope: GrantScope): string {
  return scope.session === undefined ? `turn:${scope.turnId}` : `session:${scope.session}`;
}

/** The dispatcher's grants: those for every turn, and a list per turn or named session. */
export class GrantStore {
  readonly #everywhere = new GrantList();
  readonly #scoped = new Map<string, GrantList>();

  /** Adds a grant for `scope`, or for every turn without one. Throws a TypeError on a malformed grant. */
  add(grant: unknown, scope?: GrantScope): void {
    if (scope === undefined) {
      this.#everywhere.add(grant);
      return;
    }
    const key = scopeKey(scope);
    let list = this.#scoped.get(key);
    if (list === undefined) {
      checkGrant(grant);
      if (this.#scoped.size >= MAX_GRANT_SCOPES) this.#scoped.delete(this.#scoped.keys().next().value as string);
      list = new GrantList();
      this.#scoped.set(key, list);
    }
    list.add(grant);
  }

  /** Copies of the grants of `scope` (only those: what a suspended turn carries), or of every turn. */
  list(scope?: GrantScope): Grant[] {
    return scope === undefined ? this.#everywhere.list() : (this.#scoped.get(scopeKey(scope))?.list() ?? []);
  }

  /** The first grant for every turn, then of `scope`, that covers the call. */
  match(scope: GrantScope, tool: string, input: unknown): Grant | undefined {
    const everywhere = this.#everywhere.match(tool, input);
    // No turn or session has a grant yet (the common case): no key to build.
    if (everywhere !== undefined || this.#scoped.size === 0) return everywhere;
    return this.#scoped.get(scopeKey(scope))?.match(tool, input);
  }
}
