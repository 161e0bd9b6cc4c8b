// Permission patterns: parsing, case-insensitive glob matching, argument values as strings.
import fc from 'fast-check';
import { globMatch, matchesPattern, parsePattern, type MatchSteps } from '../src/internal.js';
import { describe, expect, it } from 'vitest';

/** The reference: the glob as an anchored regular expression (fine on small inputs only). */
function regexMatch(glob: string, text: string): boolean {
  const source = [...glob]
    .map((c) => (c === '*' ? '[\\s\\S]*' : c === '?' ? '[\\s\\S]' : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`).test(text);
}

/** The most steps globMatch may take: linear in the text, one pass per 32 characters of the longest star-free piece. */
function stepBound(glob: string, text: string): number {
  const longest = Math.max(1, ...glob.split('*').map((p) => p.length));
  return text.length * Math.ceil(longest / 32) + glob.length + 2;
}

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

  it('agrees with a regular-expression reference on small globs and texts', () => {
    const alphabet = fc.constantFrom('a', 'b', '*', '?', '.', '(');
    const glob = fc.array(alphabet, { maxLength: 12 }).map((cs) => cs.join(''));
    const text = fc.array(fc.constantFrom('a', 'b', '.', '(', '?', '*'), { maxLength: 40 }).map((cs) => cs.join(''));
    // Long star-free pieces too, so the multi-word scan is checked against the reference.
    const long = fc
      .tuple(fc.array(fc.constantFrom('a', 'b', '?'), { minLength: 30, maxLength: 80 }), fc.boolean())
      .map(([cs, star]) => `${star ? '*' : ''}${cs.join('')}*`);
    fc.assert(
      fc.property(fc.oneof(glob, long), text, (g, t) => {
        const counter: MatchSteps = { steps: 0 };
        expect(globMatch(g, t, counter)).toBe(regexMatch(g, t));
        expect(counter.steps).toBeLessThanOrEqual(stepBound(g, t));
      }),
      { numRuns: 2000 },
    );
  });

  it('takes steps linear in the text on globs that cost a backtracking matcher text × glob', () => {
    const text = 'a'.repeat(1_000_000);
    for (const glob of [
      '*a*a*a*a*a*b',
      `*${'a'.repeat(60)}b*`,
      `*${'a?'.repeat(100)}b*`,
      `*${'a'.repeat(31)}b`,
      `${'?'.repeat(40)}*b*`,
    ]) {
      const counter: MatchSteps = { steps: 0 };
      expect(globMatch(glob, text, counter)).toBe(false);
      expect(counter.steps).toBeGreaterThan(0);
      expect(counter.steps).toBeLessThanOrEqual(stepBound(glob, text));
    }
    // The bound is text × words, not text × glob: a 200-character piece scans 10 MB in 7 words.
    const counter: MatchSteps = { steps: 0 };
    expect(globMatch(`*${'a'.repeat(200)}b*`, 'a'.repeat(10_000_000), counter)).toBe(false);
    expect(counter.steps).toBeLessThanOrEqual(7 * 10_000_000 + 204);
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
    expect(matchesPattern(parsePattern('pay:amount=*'), 'pay', {})).toBe(false);
    expect(matchesPattern(parsePattern('pay:constructor=*'), 'pay', {})).toBe(false);
  });

  it('every condition must match, and the tool part may be a glob', () => {
    const p = parsePattern('mcp_*:a=1:b=2');
    expect(matchesPattern(p, 'mcp_files', { a: 1, b: 2 })).toBe(true);
    expect(matchesPattern(p, 'mcp_files', { a: 1, b: 3 })).toBe(false);
    expect(matchesPattern(p, 'files', { a: 1, b: 2 })).toBe(false);
  });

  it('compares an array argument element by element: any element for a restricting rule, every element for a permitting one', () => {
    const force = parsePattern('git:args=--force*');
    const status = parsePattern('git:args=status');
    expect(matchesPattern(force, 'git', { args: ['push', '--force'] }, true)).toBe(true);
    expect(matchesPattern(force, 'git', { args: ['push', '--force'] }, false)).toBe(false);
    expect(matchesPattern(status, 'git', { args: ['status'] }, false)).toBe(true);
    expect(matchesPattern(status, 'git', { args: ['status', 'push'] }, false)).toBe(false);
    // Nested arrays are flattened, other elements compared as their JSON text; not the array's JSON text.
    expect(matchesPattern(force, 'git', { args: ['push', ['x', ['--FORCE-with-lease']]] }, true)).toBe(true);
    expect(matchesPattern(parsePattern('pay:tags=["a"*'), 'pay', { tags: ['a', 'b'] }, true)).toBe(false);
    expect(matchesPattern(parsePattern('pay:ids=4?'), 'pay', { ids: [1, 42] }, true)).toBe(true);
    expect(matchesPattern(parsePattern('pay:ids={"a":1}'), 'pay', { ids: [{ a: 1 }] }, false)).toBe(true);
    // An empty array has no element: it matches no rule.
    expect(matchesPattern(parsePattern('git:args=*'), 'git', { args: [] }, true)).toBe(false);
    expect(matchesPattern(parsePattern('git:args=*'), 'git', { args: [] }, false)).toBe(false);
  });

  it('an array nested too deep counts as unreadable (matches only restricting rules)', () => {
    let deep: unknown = ['rm'];
    for (let i = 0; i < 150; i++) deep = [deep];
    const p = parsePattern('t:arg=nothing-like-it');
    expect(matchesPattern(p, 't', { arg: deep }, true)).toBe(true);
    expect(matchesPattern(p, 't', { arg: deep }, false)).toBe(false);
  });

  it('an argument too deep to serialise matches only when asked to fail closed (deny rules)', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const p = parsePattern('t:arg=*');
    expect(matchesPattern(p, 't', { arg: deep })).toBe(false);
    expect(matchesPattern(p, 't', { arg: deep }, true)).toBe(true);
  });
});
