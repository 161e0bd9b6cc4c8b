// zod is a peer dependency: tools take schemas from the user's zod 4, whichever minor and whichever
// flavour (classic or zod/mini). A zod 3 schema is refused with a sentence that says zod 4 is needed.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as zm from 'zod/mini';
import { createDispatcher, defineTool } from '../src/index.js';

const ctx = { turnId: 't1' };

describe('zod schemas from the user', () => {
  it('a zod/mini schema (a zod 4 core schema that is not a classic z.ZodType) defines a tool and validates calls', async () => {
    const add = defineTool({
      name: 'add',
      description: 'Adds.',
      input: zm.object({ a: zm.number(), b: zm.number() }),
      execute: ({ a, b }) => a + b,
    });
    expect(add.inputSchema).toMatchObject({ type: 'object', required: ['a', 'b'] });
    const dispatcher = createDispatcher({ tools: [add], defaultDecision: 'allow' });
    const ok = await dispatcher.dispatch([{ id: 'c1', name: 'add', input: { a: 1, b: 2 } }], ctx);
    expect(ok.results).toMatchObject([{ callId: 'c1', output: 3, isError: false }]);
    const bad = await dispatcher.dispatch([{ id: 'c2', name: 'add', input: { a: 'one', b: 2 } }], ctx);
    expect(bad.results).toMatchObject([{ callId: 'c2', isError: true }]);
  });

  it('a zod 3 schema (it has _def but no _zod) is refused with a sentence that asks for zod 4', () => {
    // What a zod 3 `z.object({})` carries: `_def` with a typeName, parse methods, no `_zod`.
    const zod3Object = {
      _def: { typeName: 'ZodObject', shape: () => ({}) },
      parse: (value: unknown) => value,
      safeParse: (value: unknown) => ({ success: true, data: value }),
    };
    expect(() => defineTool({ name: 'legacy', description: 'd', input: zod3Object as never, execute: () => null })).toThrow(
      "Tool 'legacy': zod 4 is required: this schema (input) comes from zod 3 (it has _def but no _zod); install zod@^4 and build input with it.",
    );
  });

  it('anything else is still "not a zod schema"', () => {
    expect(() => defineTool({ name: 't', description: 'd', input: z.object({}).shape as never, execute: () => null })).toThrow(
      "Tool 't': input must be a zod schema",
    );
  });
});
