// The linear-time engine agrees with ECMAScript's on the patterns it accepts, and the formats
// rewritten without lookahead agree with ajv-formats' originals.
import { fullFormats } from 'ajv-formats/dist/formats.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { linearFormats, linearPattern } from '../src/regex.js';

const NUM_RUNS = 500;
const atom = fc.constantFrom(
  'a',
  'b',
  '.',
  '\\s',
  '\\S',
  '\\d',
  '\\w',
  '[ab]',
  '[^a]',
  '[\\s]',
  '[]',
  '[^]',
  '\\u00a0',
  ' ',
  '\\.',
  '-',
);
const quantifier = fc.constantFrom('', '', '*', '+', '?', '{1,2}', '*?');
const piece = fc.tuple(atom, quantifier).map(([a, q]) => a + q);
const group = fc.array(piece, { minLength: 1, maxLength: 4 }).map((p) => `(${p.join('')})`);
const pattern = fc
  .tuple(fc.boolean(), fc.array(fc.oneof(piece, group), { minLength: 1, maxLength: 4 }), fc.boolean())
  .map(([start, body, end]) => `${start ? '^' : ''}${body.join('')}${end ? '$' : ''}`);
const text = fc.string({
  unit: fc.constantFrom('a', 'b', '1', ' ', '\n', '\r', '\u00a0', '\u2028', '.', '-', 'é', '😀'),
  maxLength: 8,
});

const format = (name: string): ((s: string) => boolean) => {
  const f = (linearFormats as Record<string, unknown>)[name];
  return f as (s: string) => boolean;
};
const native = (name: string): RegExp => (fullFormats as Record<string, unknown>)[name] as RegExp;

describe('linear patterns (property)', () => {
  it('match exactly what ECMAScript matches', () => {
    fc.assert(
      fc.property(pattern, fc.array(text, { maxLength: 5 }), (p, texts) => {
        const re = linearPattern(p);
        for (const t of texts) expect([p, t, re.test(t)]).toEqual([p, t, new RegExp(p, 'u').test(t)]);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('duration and hostname agree with the lookahead originals', () => {
    const durations = fc.string({ unit: fc.constantFrom('P', 'T', '1', '2', 'Y', 'M', 'D', 'H', 'S', 'W'), maxLength: 8 });
    const hosts = fc.string({ unit: fc.constantFrom('a', 'Z', '0', '-', '.', '\n'), maxLength: 12 });
    fc.assert(
      fc.property(durations, hosts, (d, h) => {
        expect([d, format('duration')(d)]).toEqual([d, native('duration').test(d)]);
        expect([h, format('hostname')(h)]).toEqual([h, native('hostname').test(h)]);
      }),
      { numRuns: NUM_RUNS },
    );
    for (const h of ['a'.repeat(253), `${'a'.repeat(253)}.`, 'a'.repeat(254), `${'a.'.repeat(127)}`])
      expect([h.length, format('hostname')(h)]).toEqual([h.length, native('hostname').test(h)]);
  });

  it('url agrees with the original, private IPv4 addresses included', () => {
    const octet = fc.oneof(fc.integer({ min: 0, max: 260 }).map(String), fc.constantFrom('01', '001', '0254', '016'));
    const ip = fc.tuple(octet, octet, octet, octet).map((o) => o.join('.'));
    const special = fc
      .constantFrom('10', '127', '169', '172', '192')
      .chain((a) =>
        fc.tuple(fc.constantFrom('254', '168', '16', '31', '32', '15', '160', '1'), octet, octet).map((o) => [a, ...o].join('.')),
      );
    const host = fc.oneof(ip, special, fc.constantFrom('example.com', 'a-b.co', 'é.fr', 'x', 'a..b'));
    const url = fc
      .tuple(
        fc.constantFrom('http://', 'https://', 'ftp://', 'file://'),
        fc.constantFrom('', 'u@', 'u:p@', '10.0.0.1@'),
        host,
        fc.constantFrom('', ':80', ':1', '/a b', '/x@10.0.0.1'),
      )
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(url, (u) => {
        expect([u, format('url')(u)]).toEqual([u, native('url').test(u)]);
      }),
      { numRuns: 3000 },
    );
  });
});
