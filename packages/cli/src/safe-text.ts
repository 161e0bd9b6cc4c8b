// Printing untrusted text safely. Call ids, tool names, inputs, outputs and answers come from a
// model (or a server behind --base-url), from tools, or from files; printed raw, a control
// character rewrites the terminal (ESC sequences clear lines, CR returns to the line start, C1
// CSI is an escape of its own) and an id pasted into a printed command runs as shell code.
// `safeText` is applied to every such string the CLI prints; `shellQuote` to every argument of a
// command it prints for the person to paste.

/**
 * C0 controls, DEL, C1 controls, the Unicode line and paragraph separators and the bidirectional
 * overrides and isolates (which reorder what the reader sees).
 */
const UNSAFE_CHAR = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const UNSAFE = new RegExp(UNSAFE_CHAR.source, 'g');
const UNSAFE_MULTILINE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\u001b': '\\x1b' };

function escapeChar(char: string): string {
  const named = NAMED[char];
  if (named !== undefined) return named;
  const code = char.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `text` with every control character written as an escape (`\x1b`, `\r`, `\x9b`, `\u202e`, …), so
 * printing it cannot move the cursor, clear the screen or reorder the line. With `multiline`,
 * newlines and tabs are kept (a model's answer has them); everything else is escaped the same way.
 *
 * @example
 * safeText('call_1\u001b[2K\r') // 'call_1\\x1b[2K\\r'
 */
export function safeText(text: string, options: { readonly multiline?: boolean } = {}): string {
  return text.replace(options.multiline === true ? UNSAFE_MULTILINE : UNSAFE, escapeChar);
}

/** Characters a POSIX shell reads literally in an unquoted word (no globbing, expansion or splitting). */
const BARE = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * One argument quoted for a POSIX shell: bare when it has only plain characters, else in single
 * quotes (`'` written as `'\''`); an argument with control characters is written as a
 * `$'…'` string of `\xHH` bytes (POSIX.1-2024; bash, zsh, ksh), so the printed line holds no
 * control character and the shell still gets the argument byte for byte.
 *
 * @example
 * shellQuote('call_2')             // call_2
 * shellQuote('x;touch${IFS}/tmp/x') // 'x;touch${IFS}/tmp/x'
 */
export function shellQuote(arg: string): string {
  if (BARE.test(arg)) return arg;
  if (!UNSAFE_CHAR.test(arg)) return `'${arg.replace(/'/g, "'\\''")}'`;
  let out = '';
  for (const char of arg) {
    if (char === '\\' || char === "'") out += `\\${char}`;
    else if (UNSAFE_CHAR.test(char)) {
      for (const byte of Buffer.from(char, 'utf8')) out += `\\x${byte.toString(16).padStart(2, '0')}`;
    } else out += char;
  }
  return `$'${out}'`;
}

/** A command line of shell-quoted words, e.g. `shellCommand(['turnkit', 'resume', file])`. */
export function shellCommand(words: readonly string[]): string {
  return words.map(shellQuote).join(' ');
}

/**
 * JSON text with the characters JSON.stringify leaves raw (DEL, C1, U+2028/2029, bidi controls)
 * written as `\uXXXX`: the same JSON value, safe to print on a terminal.
 */
export function safeJson(json: string): string {
  return json.replace(
    /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
