// Remembered "approve and remember" decisions: the only state the policy stage reads besides the
// configuration. Every grant is checked when added; the list never holds the same grant twice.

import { TOOL_NAME } from './define.js';
import { matchesPattern, parsePattern, type Pattern } from './patterns.js';
import type { Grant } from './types.js';

/** A copy of `grant` if it is a valid grant; else a TypeError showing the value and the valid forms. */
export function checkGrant(grant: unknown): Grant {
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
  throw new TypeError(
    `Grant ${shown} is invalid: use { scope: 'session' }, { scope: 'tool', tool: 'name' } or { scope: 'tool', pattern: 'tool:arg=glob' }.`,
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

  /** The first grant that covers a call of `tool` with this (validated) input. */
  match(tool: string, input: unknown): Grant | undefined {
    for (const { grant, pattern } of this.#grants) {
      if (grant.scope === 'session') return grant;
      if ('tool' in grant && grant.tool.toLowerCase() === tool.toLowerCase()) return grant;
      if (pattern !== undefined && matchesPattern(pattern, tool, input)) return grant;
    }
    return undefined;
  }
}
