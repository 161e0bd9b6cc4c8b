import { execFileSync } from 'node:child_process';
import { createTurn } from '@turnkit/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { safeJson, safeText, shellCommand, shellQuote } from '../src/safe-text.ts';
import { resumeHelp } from '../src/turn.ts';

/** Any control character a terminal acts on (newline only where the text may have lines). */
const RAW = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const RAW_MULTILINE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** Strings rich in the characters that matter here: controls, quotes, shell syntax, non-ASCII. */
const hostile = fc.string({
  unit: fc.oneof(
    fc.constantFrom(
      '\u001b',
      '\r',
      '\n',
      '\t',
      '\u0007',
      '\u007f',
      '\u009b',
      '\u0085',
      '\u202e',
      '\u2028',
      "'",
      '"',
      '\\',
      '$',
      '`',
      ';',
      '#',
      '*',
      '=',
      ' ',
      '~',
      '!',
      '{',
      '}',
    ),
    fc.string({ minLength: 1, maxLength: 1, unit: 'binary' }),
  ),
  maxLength: 24,
});

/** What bash makes of `words` (printed by printf, one per NUL). */
function bashWords(words: string): string[] {
  return execFileSync('bash', ['-c', `printf '%s\\0' ${words}`], { encoding: 'utf8' })
    .split('\0')
    .slice(0, -1);
}

describe('safeText', () => {
  it('leaves no control character and changes nothing else (numRuns 500)', () => {
    fc.assert(
      fc.property(hostile, (text) => {
        const safe = safeText(text);
        expect(safe).not.toMatch(RAW);
        expect(safeText(text, { multiline: true })).not.toMatch(RAW_MULTILINE);
        if (!RAW.test(text)) expect(safe).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it('writes escapes a reader can tell apart', () => {
    expect(safeText('a\u001b[2K\rb\u009bc\u007f\u202e\n\t')).toBe('a\\x1b[2K\\rb\\x9bc\\x7f\\u202e\\n\\t');
    expect(safeText('line 1\n\tline 2\r', { multiline: true })).toBe('line 1\n\tline 2\\r');
  });
});

describe('shellQuote', () => {
  it('bash reads every quoted argument back byte for byte, and the printed line has no control character (numRuns 150)', () => {
    // A NUL cannot be in a command-line argument at all.
    const arg = hostile.map((s) => s.replace(/\u0000/g, ''));
    fc.assert(
      fc.property(fc.array(arg, { minLength: 1, maxLength: 4 }), (args) => {
        const line = shellCommand(args);
        expect(line).not.toMatch(RAW);
        expect(bashWords(line)).toEqual(args);
      }),
      { numRuns: 150 },
    );
  });

  it('leaves plain words bare and single-quotes the rest', () => {
    expect(shellQuote('call_2')).toBe('call_2');
    expect(shellQuote('./turn.json')).toBe('./turn.json');
    expect(shellQuote('')).toBe("''");
    expect(shellQuote('x;touch${IFS}/tmp/INJECTED;#')).toBe("'x;touch${IFS}/tmp/INJECTED;#'");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
    expect(shellQuote('a\u001bb\u009b')).toBe("$'a\\x1bb\\xc2\\x9b'");
  });
});

describe('safeJson', () => {
  it('is the same JSON value with no raw control character (numRuns 300)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), hostile, (value, text) => {
        const json = safeJson(JSON.stringify({ value, text }));
        expect(json).not.toMatch(RAW);
        expect(JSON.parse(json)).toEqual(JSON.parse(JSON.stringify({ value, text })));
      }),
      { numRuns: 300 },
    );
  });
});

describe('the printed resume commands', () => {
  it('give bash the file and each id as one argument, whatever the ids hold', () => {
    const ids = ['call_2', 'x;touch${IFS}INJECTED;#', "it's", 'call\u001b[2K\r\u009b1;1H'];
    const pending = ids.map((id) => ({ call: { id, name: 'delete', input: {} } }));
    const help = resumeHelp('turn dir/turn.json', { pending, state: createTurn({ id: 'turn' }) });
    expect(help).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    const [approve, reject] = help.split('\n').filter((line) => line.startsWith('  turnkit resume '));
    expect(bashWords(approve!.replace(/^ {2}turnkit /, ''))).toEqual([
      'resume',
      './turn dir/turn.json',
      ...ids.flatMap((id) => ['--approve', id]),
    ]);
    expect(bashWords(reject!.replace(/^ {2}turnkit /, ''))).toEqual([
      'resume',
      './turn dir/turn.json',
      ...ids.flatMap((id) => ['--reject', `${id}=reason for the model`]),
    ]);
  });
});
