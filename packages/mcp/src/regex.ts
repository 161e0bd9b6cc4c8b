// Regular expressions from untrusted JSON Schemas, run in linear time. A `pattern` or a
// `patternProperties` key is written for ECMAScript's backtracking engine, where a pattern such
// as `^(a+)+$` takes exponential time on a short string and blocks the event loop. Here every
// such pattern runs on RE2 (re2js, pure JavaScript), whose matching time is linear in the input.
// A pattern RE2 cannot run (backreferences, lookaround) is refused with an UnsafePatternError.
// The `format` checks that are regular expressions run on RE2 too.

import type { Format } from 'ajv';
import type { RegExpEngine, RegExpLike } from 'ajv/dist/types/index.js';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { RE2JS } from 're2js';

/** A schema's pattern that only a backtracking engine could run: the schema is refused. */
export class UnsafePatternError extends Error {
  override readonly name = 'UnsafePatternError';
  /** The pattern as the schema has it. */
  readonly pattern: string;
  /** Why RE2 refused it. */
  readonly reason: string;
  constructor(pattern: string, reason: string) {
    super(
      `the pattern ${shown(pattern)} cannot run on a linear-time regex engine (${reason}); backreferences and lookaround are not supported`,
    );
    this.pattern = pattern;
    this.reason = reason;
  }
}

/** A pattern for a message: quoted, and cut when long. */
export function shown(pattern: string): string {
  const quoted = JSON.stringify(pattern);
  return quoted.length > 120 ? `${quoted.slice(0, 117)}…"` : quoted;
}

// ECMAScript's \s (WhiteSpace and LineTerminator); RE2's \s is ASCII only.
const JS_SPACE = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';

/**
 * An ECMAScript pattern (already known to be valid with the `u` flag) in RE2 syntax with the same
 * meaning: `.` and `\s` as ECMAScript has them, `[\b]` as a backspace, `[]` matching nothing, and
 * the rest translated by re2js (`\uXXXX`, `(?<name>`, `[^]`, `\cX`).
 */
function re2Syntax(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] as string;
    if (ch === '\\') {
      const next = pattern[i + 1] ?? '';
      i++;
      // With the `u` flag, \k is only ever a named backreference; re2js would read it as a letter.
      if (next === 'k') throw new UnsafePatternError(pattern, 'a backreference');
      if (next === 's') out += inClass ? JS_SPACE : `[${JS_SPACE}]`;
      else if (next === 'S' && !inClass) out += `[^${JS_SPACE}]`;
      else if (next === 'b' && inClass) out += '\\x08';
      else out += `\\${next}`;
    } else if (inClass) {
      if (ch === ']') inClass = false;
      out += ch;
    } else if (ch === '[') {
      if (pattern[i + 1] === ']') {
        out += '(?:\\b\\B)'; // [] matches nothing
        i++;
      } else {
        inClass = true;
        out += ch;
        if (pattern[i + 1] === '^' && pattern[i + 2] === ']') {
          out += '^]'; // [^] is any character; re2js translates it
          i += 2;
          inClass = false;
        }
      }
    } else if (ch === '.') out += '[^\\n\\r\\u2028\\u2029]';
    else out += ch;
  }
  return RE2JS.translateRegExp(out);
}

/** `pattern` compiled by RE2; throws UnsafePatternError when RE2 cannot run it, SyntaxError when it is no ECMAScript pattern. */
export function linearPattern(pattern: string, flags = 'u'): RE2JS {
  // Compiling (not running) checks the syntax as the schema's dialect defines it.
  new RegExp(pattern, flags);
  let re2: string;
  try {
    re2 = re2Syntax(pattern);
    return RE2JS.compile(re2, flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (error) {
    if (error instanceof UnsafePatternError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new UnsafePatternError(pattern, message.replace(/^error parsing regexp: /, ''));
  }
}

/** Ajv's `code.regExp`: every `pattern` and `patternProperties` key runs on RE2. */
export const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string, flags: string): RegExpLike => {
    const re = linearPattern(pattern, flags);
    return { test: (text: string) => re.test(text), toString: () => `/${pattern}/${flags}` } as RegExpLike;
  },
  { code: 'linearRegExp' },
);

/** A format given as a regular expression, as a check run on RE2. */
function linearFormat(source: string, flags: string): (text: string) => boolean {
  const re = linearPattern(source, flags);
  return (text) => re.test(text);
}

// The three formats of ajv-formats whose regular expressions use lookahead, rewritten without it.
// Their equivalence with the originals is checked by test/regex.prop.test.ts.

// `duration`: ^P(?!$)(...(T(?=\d)...)?...)$ – not "P" alone, and "T" is followed by a digit.
const durationBody = linearFormat('^P((\\d+Y)?(\\d+M)?(\\d+D)?(T(\\d+H)?(\\d+M)?(\\d+S)?)?|(\\d+W)?)$', '');
function duration(text: string): boolean {
  const t = text.indexOf('T');
  return text !== 'P' && (t === -1 || /\d/.test(text[t + 1] ?? '')) && durationBody(text);
}

// `hostname`: ^(?=.{1,253}\.?$) is a length check (the rest admits no line terminator).
const hostnameBody = linearFormat('^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[-0-9a-z]{0,61}[0-9a-z])?)*\\.?$', 'i');
function hostname(text: string): boolean {
  return (text.length <= 253 || (text.length === 254 && text.endsWith('.'))) && hostnameBody(text);
}

// `url`: the lookaheads refuse a private IPv4 host (10/8, 127/8, 169.254/16, 192.168/16,
// 172.16/12); here the IPv4 alternatives spell out the allowed addresses instead.
const OCTET = '(?:1?\\d{1,2}|2[0-4]\\d|25[0-5])';
const LAST = '(?:[1-9]\\d?|1\\d\\d|2[0-4]\\d|25[0-4])';
const IPV4 = [
  // first octet 1..223 but 10, 127, 169, 172, 192
  `(?:[1-9]|1[1-9]|[2-9]\\d|1[01]\\d|12[0-689]|1[3-5]\\d|16[0-8]|17[013-9]|18\\d|19[013-9]|2[01]\\d|22[0-3])(?:\\.${OCTET}){2}`,
  // 169.x but 169.254, 192.x but 192.168, 172.x but 172.16 to 172.31
  '169\\.(?:\\d|\\d\\d|1\\d\\d|2[0-4]\\d|25[0-35])',
  '192\\.(?:\\d|\\d\\d|1[0-57-9]\\d|16[0-79]|2[0-4]\\d|25[0-5])',
  '172\\.(?:\\d|0\\d|1[0-5]|3[2-9]|[4-9]\\d|1\\d\\d|2[0-4]\\d|25[0-5])',
]
  .map((head, i) => (i === 0 ? `${head}\\.${LAST}` : `${head}\\.${OCTET}\\.${LAST}`))
  .join('|');
const HOST = '(?:(?:[a-z0-9\\u{00a1}-\\u{ffff}]+-)*[a-z0-9\\u{00a1}-\\u{ffff}]+)';
const url = linearFormat(
  `^(?:https?|ftp):\\/\\/(?:\\S+(?::\\S*)?@)?(?:${IPV4}|${HOST}(?:\\.${HOST})*(?:\\.(?:[a-z\\u{00a1}-\\u{ffff}]{2,})))(?::\\d{2,5})?(?:\\/[^\\s]*)?$`,
  'iu',
);

const rewritten: Record<string, Format> = { duration, hostname, url };

/**
 * The formats of ajv-formats ("full" mode, as the MCP SDK's validator has them), with every one
 * that is a regular expression run on RE2. The others are fixed functions that run in linear time.
 */
export const linearFormats: Record<string, Format> = Object.fromEntries(
  Object.entries(fullFormats as Record<string, Format>).map(([name, format]) => [
    name,
    rewritten[name] ?? (format instanceof RegExp ? linearFormat(format.source, format.flags) : format),
  ]),
);
