// Permission patterns: `tool` or `tool:arg=glob[:arg2=glob]`.
//
// Rules of this file:
// - Matching is case-insensitive, for the tool name and for argument values.
// - A glob has `*` (any run of characters, including none) and `?` (exactly one character); every
//   other character is literal. The tool part may be a glob too (`mcp_*`).
// - An argument value is compared as a string: a string argument as is, any other JSON value as
//   its `JSON.stringify` text (`true`, `42`, `["a"]`). A missing argument never matches.
// - Glob matching is the iterative two-pointer algorithm (O(text × pattern) at worst), never a
//   regular expression, so a hostile 10 MB argument cannot make a pattern backtrack for minutes.

/** One `arg=glob` condition of a pattern, lower-cased. */
export interface ArgCondition {
  readonly arg: string;
  readonly glob: string;
}

/** A parsed permission pattern. `source` is the text as written, used in decision sources. */
export interface Pattern {
  readonly source: string;
  readonly tool: string;
  readonly args: readonly ArgCondition[];
}

const TOOL_GLOB = /^[a-zA-Z0-9_*?-]{1,64}$/;
const ARG_NAME = /^[a-zA-Z0-9_.-]{1,64}$/;
// A condition starts at a colon followed by `name=`; any other colon belongs to the glob before
// it, so `shell:cmd=echo a:b` is one condition on `cmd`.
const CONDITION_SPLIT = /:(?=[a-zA-Z0-9_.-]{1,64}=)/;

/**
 * Parses a permission pattern; throws a `TypeError` naming the pattern when it is malformed.
 *
 * @example parsePattern('shell:cmd=ls*') // { tool: 'shell', args: [{ arg: 'cmd', glob: 'ls*' }] }
 */
export function parsePattern(source: string): Pattern {
  if (typeof source !== 'string') {
    throw new TypeError(`A permission pattern must be a string like 'shell' or 'shell:cmd=ls*', got ${typeof source}.`);
  }
  const colon = source.indexOf(':');
  const tool = colon === -1 ? source : source.slice(0, colon);
  if (!TOOL_GLOB.test(tool)) {
    throw new TypeError(
      `Permission pattern '${source}' has an invalid tool part '${tool}': use a tool name (letters, digits, _ or -, with * or ? as wildcards).`,
    );
  }
  const args: ArgCondition[] = [];
  if (colon !== -1) {
    const rest = source.slice(colon + 1);
    if (!/^[a-zA-Z0-9_.-]{1,64}=/.test(rest)) {
      throw new TypeError(`Permission pattern '${source}' must continue after ':' with an 'arg=glob' condition, like 'shell:cmd=ls*'.`);
    }
    for (const condition of rest.split(CONDITION_SPLIT)) {
      const eq = condition.indexOf('=');
      const arg = condition.slice(0, eq);
      if (!ARG_NAME.test(arg)) {
        throw new TypeError(`Permission pattern '${source}' has an invalid argument name '${arg}'.`);
      }
      args.push({ arg: arg.toLowerCase(), glob: condition.slice(eq + 1).toLowerCase() });
    }
  }
  return { source, tool: tool.toLowerCase(), args };
}

/**
 * True when `text` matches `glob` (`*` any run, `?` one character), case-sensitively; callers
 * lower-case both sides first.
 */
export function globMatch(glob: string, text: string): boolean {
  let g = 0;
  let t = 0;
  let starG = -1;
  let starT = 0;
  while (t < text.length) {
    const c = glob.charCodeAt(g);
    if (g < glob.length && (c === 63 /* ? */ || c === text.charCodeAt(t))) {
      g++;
      t++;
    } else if (g < glob.length && c === 42 /* * */) {
      starG = g++;
      starT = t;
    } else if (starG !== -1) {
      g = starG + 1;
      t = ++starT;
    } else {
      return false;
    }
  }
  while (g < glob.length && glob.charCodeAt(g) === 42) g++;
  return g === glob.length;
}

/** The string an argument value is compared as; undefined when missing, null when present but not serialisable. */
function argText(input: unknown, arg: string): string | undefined | null {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return undefined;
  // Argument names are matched case-insensitively too; own properties only, so `constructor`
  // never resolves to Object.prototype's.
  const key = Object.keys(input).find((k) => k.toLowerCase() === arg);
  if (key === undefined) return undefined;
  const value: unknown = (input as Record<string, unknown>)[key];
  if (typeof value === 'string') return value;
  try {
    const text = JSON.stringify(value);
    return typeof text === 'string' ? text : null;
  } catch {
    return null; // too deep to serialise
  }
}

/**
 * True when the call (tool name and validated input) matches the pattern. An argument that is
 * present but cannot be serialised matches only when `unreadableMatches` is set: deny rules pass
 * true (fail closed), allow rules and grants pass false.
 */
export function matchesPattern(pattern: Pattern, toolName: string, input: unknown, unreadableMatches = false): boolean {
  if (!globMatch(pattern.tool, toolName.toLowerCase())) return false;
  return pattern.args.every((condition) => {
    const text = argText(input, condition.arg);
    if (text === undefined) return false;
    if (text === null) return unreadableMatches;
    return globMatch(condition.glob, text.toLowerCase());
  });
}
