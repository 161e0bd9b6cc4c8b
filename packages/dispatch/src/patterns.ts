// Permission patterns: `tool` or `tool:arg=glob[:arg2=glob]`.
//
// Rules of this file:
// - Matching is case-insensitive, for the tool name and for argument values.
// - A glob has `*` (any run of characters, including none) and `?` (exactly one character); every
//   other character is literal. The tool part may be a glob too (`mcp_*`).
// - An argument value is compared as a string: a string argument as is, any other JSON value as
//   its `JSON.stringify` text (`true`, `42`). A missing argument never matches. Two keys that
//   differ only in case (`CMD`, `cmd`) make the argument ambiguous: restricting rules match it,
//   permitting ones do not, and the policy stage denies the call (`collidingArgument`).
// - An array argument is compared element by element (nested arrays flattened): a restricting
//   rule (deny, ask) matches when any element matches, a permitting one (allow, grant) only when
//   every element does. An empty array has no element and matches no rule.
// - Glob matching is linear in the text: the glob is split at its stars, and each piece is
//   found, leftmost first, with a bit-parallel (shift-and) scan, so every text character is
//   looked at once per 32 characters of the longest piece. Never a regular expression, so a hostile
//   10 MB argument cannot make a pattern backtrack.

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
      throw new TypeError(
        `Permission pattern '${source}' must continue after ':' with an 'arg=glob' condition, like 'shell:cmd=ls*'.`,
      );
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

/** Counts the work of `globMatch`: one step per text character scanned per 32-bit word of state, and one per character compared in place. */
export interface MatchSteps {
  steps: number;
}

const _STAR = 42; // *
const QUESTION = 63; // ?

/** One star-free piece of a glob, ready for a shift-and scan. */
interface Piece {
  readonly text: string;
  /** 32-bit words of scan state: ceil(length / 32). */
  readonly words: number;
  /** Bit i of word i >> 5 is set when position i is `?`. */
  readonly wild: Uint32Array;
  /** For each character in the piece, the positions it (or `?`) may take. */
  readonly masks: ReadonlyMap<number, Uint32Array>;
}

interface CompiledGlob {
  /** The glob itself when it has no star: the text must match it whole. */
  readonly exact: Piece | undefined;
  readonly head: Piece;
  readonly middle: readonly Piece[];
  readonly tail: Piece;
}

function piece(text: string): Piece {
  const words = Math.max(1, Math.ceil(text.length / 32));
  const wild = new Uint32Array(words);
  for (let i = 0; i < text.length; i++)
    if (text.charCodeAt(i) === QUESTION) wild[i >> 5] = (wild[i >> 5] as number) | (1 << (i & 31));
  const masks = new Map<number, Uint32Array>();
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUESTION) continue;
    let mask = masks.get(c);
    if (mask === undefined) {
      mask = wild.slice();
      masks.set(c, mask);
    }
    mask[i >> 5] = (mask[i >> 5] as number) | (1 << (i & 31));
  }
  return { text, words, wild, masks };
}

function compile(glob: string): CompiledGlob {
  const parts = glob.split('*');
  if (parts.length === 1) {
    const whole = piece(glob);
    return { exact: whole, head: whole, middle: [], tail: whole };
  }
  return {
    exact: undefined,
    head: piece(parts[0] as string),
    middle: parts
      .slice(1, -1)
      .filter((p) => p !== '')
      .map(piece),
    tail: piece(parts[parts.length - 1] as string),
  };
}

// Globs come from the dispatcher's options and grants: few, and matched again and again.
const compiled = new Map<string, CompiledGlob>();
const MAX_COMPILED = 1000;

function compiledGlob(glob: string): CompiledGlob {
  let c = compiled.get(glob);
  if (c === undefined) {
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    c = compile(glob);
    compiled.set(glob, c);
  }
  return c;
}

/** True when `p` matches `text` at `at` (which must leave room for it). */
function matchesAt(p: Piece, text: string, at: number, counter: MatchSteps | undefined): boolean {
  const s = p.text;
  let i = 0;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c !== QUESTION && c !== text.charCodeAt(at + i)) break;
  }
  if (counter !== undefined) counter.steps += i + 1;
  return i === s.length;
}

/**
 * The first index ≥ `from` where `p` matches and ends at or before `end`, or -1. Shift-and: bit i
 * of the state is set when the last i + 1 text characters match the piece's first i + 1.
 */
function find(p: Piece, text: string, from: number, end: number, counter: MatchSteps | undefined): number {
  const length = p.text.length;
  if (length === 0) return from;
  const last = length - 1;
  const lastWord = last >> 5;
  const lastBit = 1 << (last & 31);
  if (p.words === 1) {
    const wild = p.wild[0] as number;
    let state = 0;
    for (let t = from; t < end; t++) {
      const mask = p.masks.get(text.charCodeAt(t));
      state = ((state << 1) | 1) & (mask === undefined ? wild : (mask[0] as number));
      if ((state & lastBit) !== 0) {
        if (counter !== undefined) counter.steps += t - from + 1;
        return t - last;
      }
    }
    if (counter !== undefined) counter.steps += end - from;
    return -1;
  }
  const state = new Uint32Array(p.words);
  for (let t = from; t < end; t++) {
    const mask = p.masks.get(text.charCodeAt(t)) ?? p.wild;
    let carry = 1;
    for (let w = 0; w < p.words; w++) {
      const word = state[w] as number;
      state[w] = ((word << 1) | carry) & (mask[w] as number);
      carry = word >>> 31;
    }
    if (((state[lastWord] as number) & lastBit) !== 0) {
      if (counter !== undefined) counter.steps += (t - from + 1) * p.words;
      return t - last;
    }
  }
  if (counter !== undefined) counter.steps += (end - from) * p.words;
  return -1;
}

/**
 * True when `text` matches `glob` (`*` any run, `?` one UTF-16 code unit), case-sensitively;
 * callers lower-case both sides first. Linear in the text: pass `counter` to count the steps
 * (at most `text.length × ceil(longest star-free piece / 32) + glob.length + 2`).
 */
export function globMatch(glob: string, text: string, counter?: MatchSteps): boolean {
  const g = compiledGlob(glob);
  if (g.exact !== undefined) return text.length === glob.length && matchesAt(g.exact, text, 0, counter);
  const { head, tail } = g;
  if (text.length < head.text.length + tail.text.length) return false;
  if (!matchesAt(head, text, 0, counter)) return false;
  const end = text.length - tail.text.length;
  if (!matchesAt(tail, text, end, counter)) return false;
  // Each middle piece, leftmost first, after the one before it: taking the earliest match never
  // loses a match, since `*` can absorb whatever lies between.
  let at = head.text.length;
  for (const p of g.middle) {
    const found = find(p, text, at, end, counter);
    if (found === -1) return false;
    at = found + p.text.length;
  }
  return true;
}

const MAX_ARRAY_DEPTH = 100;

/**
 * The strings an argument value is compared as: one for a string or other JSON value, one per
 * element for an array (nested arrays flattened). Undefined when missing, null when present but
 * not serialisable (too deep).
 */
function argTexts(input: unknown, arg: string): string[] | undefined | null {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return undefined;
  // Argument names are matched case-insensitively too; own properties only, so `constructor`
  // never resolves to Object.prototype's. Two keys that both match (`CMD` and `cmd`) are
  // ambiguous: the rule cannot know which one the tool reads, so the value counts as unreadable.
  const keys = Object.keys(input).filter((k) => k.toLowerCase() === arg);
  if (keys.length === 0) return undefined;
  if (keys.length > 1) return null;
  const key = keys[0] as string;
  const value: unknown = (input as Record<string, unknown>)[key];
  if (!Array.isArray(value)) {
    const text = valueText(value);
    return text === null ? null : [text];
  }
  const texts: string[] = [];
  // Depth-first, in element order, without recursion.
  const stack: { readonly items: readonly unknown[]; index: number }[] = [{ items: value, index: 0 }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as { readonly items: readonly unknown[]; index: number };
    if (top.index === top.items.length) {
      stack.pop();
      continue;
    }
    const item = top.items[top.index++];
    if (Array.isArray(item)) {
      if (stack.length >= MAX_ARRAY_DEPTH) return null;
      stack.push({ items: item, index: 0 });
      continue;
    }
    const text = valueText(item);
    if (text === null) return null;
    texts.push(text);
  }
  return texts;
}

function valueText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  try {
    const text = JSON.stringify(value);
    return typeof text === 'string' ? text : null;
  } catch {
    return null; // too deep to serialise
  }
}

/**
 * True when the call (tool name and validated input) matches the pattern.
 *
 * `restricting` is true for rules that stop or hold a call (deny, ask) and false for rules that
 * let it through (allow, grants). A restricting rule fails closed: an argument that is present but
 * cannot be serialised matches, and an array argument matches when any element does. A permitting
 * rule needs a readable argument, and every element of an array argument must match.
 */
export function matchesPattern(pattern: Pattern, toolName: string, input: unknown, restricting = false): boolean {
  if (!globMatch(pattern.tool, toolName.toLowerCase())) return false;
  return pattern.args.every((condition) => {
    const texts = argTexts(input, condition.arg);
    if (texts === undefined) return false;
    if (texts === null) return restricting;
    if (texts.length === 0) return false;
    const matches = (text: string): boolean => globMatch(condition.glob, text.toLowerCase());
    return restricting ? texts.some(matches) : texts.every(matches);
  });
}

/**
 * The first argument named by a pattern in `patterns` that applies to `toolName` whose keys in
 * `input` collide case-insensitively (`{ CMD: 'ls', cmd: 'rm -rf /' }` for `shell:cmd=…`), or
 * undefined. A rule and the tool must read the same value, so such a call is denied.
 */
export function collidingArgument(patterns: readonly Pattern[], toolName: string, input: unknown): string | undefined {
  if (patterns.length === 0 || input === null || typeof input !== 'object' || Array.isArray(input)) return undefined;
  const tool = toolName.toLowerCase();
  const counts = new Map<string, number>();
  for (const key of Object.keys(input)) counts.set(key.toLowerCase(), (counts.get(key.toLowerCase()) ?? 0) + 1);
  for (const pattern of patterns) {
    if (!globMatch(pattern.tool, tool)) continue;
    const hit = pattern.args.find((condition) => (counts.get(condition.arg) ?? 0) > 1);
    if (hit !== undefined) return hit.arg;
  }
  return undefined;
}
