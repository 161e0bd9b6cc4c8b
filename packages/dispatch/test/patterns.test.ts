// Permission patterns: parsing, case-insensitive glob matching, argument values as strings.
import { describe, expect, it } from 'vitest';
import { globMatch, matchesPattern, parsePattern } from '../src/index.js';

describe('parsePattern', () => {
  it('parses a tool and its conditions; a colon not followed by `name=` belongs to the glob', () => {
    expect(parsePattern('shell')).toEqual({ source: 'shell', tool: 'shell', args: [] });
    expect(parsePattern('Shell:cmd=LS*:cwd=/tmp/*')).toEqual({
      source: 'Shell:cmd=LS*:cwd=/tmp/*',
      tool: 'shell',
      args: [
        { arg: 'cmd', glob: 'ls*' },
        { arg: 'cwd', glob: '/tmp/*' },
      ],
    });
    expect(parsePattern('shell:cmd=echo a:b').args).toEqual([{ arg: 'cmd', glob: 'echo a:b' }]);
  });

  it.each(['', 'bad tool', 'shell:', 'shell:cmd', 'shell:=x', 'a.b'])('rejects %j with a sentence naming it', (p) => {
    expect(() => parsePattern(p)).toThrow(`Permission pattern '${p}'`);
  });
});

describe('globMatch', () => {
  it.each([
    ['ls*', 'ls -la', true],
    ['ls*', 'cat', false],
    ['*', '', true],
    ['a?c', 'abc', true],
    ['a?c', 'ac', false],
    ['*.txt', 'notes.txt', true],
    ['*.txt', 'notes.txt.bak', false],
    ['a*b*c', 'axxbyyc', true],
    ['a.c', 'abc', false],
    ['(x)+', '(x)+', true],
  ])('%j against %j is %s', (glob, text, expected) => {
    expect(globMatch(glob, text)).toBe(expected);
  });

  it('stays fast on inputs that make regular expressions backtrack', () => {
    const text = 'a'.repeat(200_000);
    expect(globMatch('*a*a*a*a*a*b', text)).toBe(false);
  });
});

describe('matchesPattern', () => {
  it('is case-insensitive for tool names, argument names and values', () => {
    expect(matchesPattern(parsePattern('SHELL:CMD=RM*'), 'shell', { cmd: 'rm -rf /' })).toBe(true);
    expect(matchesPattern(parsePattern('shell:cmd=rm*'), 'Shell', { Cmd: 'RM x' })).toBe(true);
  });

  it('compares non-string arguments as their JSON text; a missing argument never matches', () => {
    expect(matchesPattern(parsePattern('pay:amount=1??'), 'pay', { amount: 150 })).toBe(true);
    expect(matchesPattern(parsePattern('pay:force=true'), 'pay', { force: true })).toBe(true);
    expect(matchesPattern(parsePattern('pay:tags=["a"*'), 'pay', { tags: ['a', 'b'] })).toBe(true);
    expect(matchesPattern(parsePattern('pay:amount=*'), 'pay', {})).toBe(false);
    expect(matchesPattern(parsePattern('pay:constructor=*'), 'pay', {})).toBe(false);
  });

  it('every condition must match, and the tool part may be a glob', () => {
    const p = parsePattern('mcp_*:a=1:b=2');
    expect(matchesPattern(p, 'mcp_files', { a: 1, b: 2 })).toBe(true);
    expect(matchesPattern(p, 'mcp_files', { a: 1, b: 3 })).toBe(false);
    expect(matchesPattern(p, 'files', { a: 1, b: 2 })).toBe(false);
  });

  it('an argument too deep to serialise matches only when asked to fail closed (deny rules)', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const p = parsePattern('t:arg=*');
    expect(matchesPattern(p, 't', { arg: deep })).toBe(false);
    expect(matchesPattern(p, 't', { arg: deep }, true)).toBe(true);
  });
});
