// Opt-in coercion of quoted arguments, guided by the tool's schema.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { CallRecord } from '@turnkit/core';
import { createDispatcher, defineTool } from '../src/index.js';
import { coerceBySchema } from '../src/coerce.js';
import { call } from './fixtures.js';

const table = (name: string, coerce?: boolean) =>
  defineTool({
    name,
    description: 'Books a table.',
    ...(coerce === undefined ? {} : { coerce }),
    input: z.object({
      guests: z.number().int(),
      outside: z.boolean(),
      note: z.string(),
      code: z.union([z.string(), z.number()]).optional(),
      times: z.array(z.number()).optional(),
      contact: z.object({ phone: z.string(), vip: z.boolean() }).optional(),
    }),
    execute: (input) => input,
  });
const book = table('book');

const quoted = {
  guests: '4',
  outside: 'true',
  note: '42',
  code: '7',
  times: '[18, 19.5]',
  contact: { phone: '0123', vip: 'FALSE' },
};

describe('coerce', () => {
  it('is off by default: a quoted number is invalid input', async () => {
    const dispatcher = createDispatcher({ defaultDecision: 'allow', tools: [book] });
    const { results } = await dispatcher.dispatch([call('book', quoted)], { turnId: 't' });
    expect(results[0]).toMatchObject({ isError: true, errorKind: 'invalid_input' });
  });

  it('on the dispatcher, turns quoted values into what the schema wants, and leaves strings alone', async () => {
    const records: CallRecord[] = [];
    const dispatcher = createDispatcher({
      defaultDecision: 'allow',
      tools: [book],
      coerce: true,
      onRecord: (r) => records.push(r),
    });
    const { results } = await dispatcher.dispatch([call('book', quoted)], { turnId: 't' });
    const ran = { guests: 4, outside: true, note: '42', code: '7', times: [18, 19.5], contact: { phone: '0123', vip: false } };
    expect(results[0]).toMatchObject({ isError: false, output: ran });
    expect(records[0]?.input).toEqual(ran);
  });

  it("a tool's own coerce wins over the dispatcher's", async () => {
    const on = createDispatcher({ defaultDecision: 'allow', tools: [table('strict', false)], coerce: true });
    const off = createDispatcher({ defaultDecision: 'allow', tools: [table('lenient', true)] });
    expect((await on.dispatch([call('strict', quoted)], { turnId: 't' })).results[0]?.errorKind).toBe('invalid_input');
    expect((await off.dispatch([call('lenient', quoted)], { turnId: 't' })).results[0]?.isError).toBe(false);
  });

  it('keeps the first error when coercion does not help, and refuses a non-boolean option', async () => {
    const dispatcher = createDispatcher({ defaultDecision: 'allow', tools: [book], coerce: true });
    const { results } = await dispatcher.dispatch([call('book', { guests: 'four', outside: 'yes', note: 'window' })], {
      turnId: 't',
    });
    expect(results[0]?.output).toBe(
      "Invalid input for 'book':\n- guests: Invalid input: expected number, received string\n- outside: Invalid input: expected boolean, received string\nFix the arguments and call 'book' again.",
    );
    expect(() => createDispatcher({ defaultDecision: 'allow', tools: [], coerce: 'yes' as never })).toThrow(
      'createDispatcher: coerce must be a boolean.',
    );
    expect(() => table('book', 1 as never)).toThrow("Tool 'book': coerce must be a boolean.");
  });

  it('reads back any finite number written as text, and never changes a string field (numRuns 300)', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string(), (n, text) => {
        expect(coerceBySchema(String(n), { type: 'number' })).toBe(Number(String(n)));
        expect(coerceBySchema(text, { type: 'string' })).toBe(text);
        const integer = coerceBySchema(String(n), { type: 'integer' });
        expect(integer).toBe(Number.isInteger(n) ? Number(String(n)) : String(n));
      }),
      { numRuns: 300 },
    );
  });
});
