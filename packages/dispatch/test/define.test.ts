// defineTool and createDispatcher reject bad definitions at definition time, naming the culprit.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDispatcher, defineTool } from '../src/index.js';
import { add, echo } from './fixtures.js';

const base = { description: 'd', input: z.object({}), execute: () => null };

describe('defineTool', () => {
  it('accepts names of 1 to 64 letters, digits, _ or -', () => {
    expect(defineTool({ ...base, name: 'a' }).name).toBe('a');
    expect(defineTool({ ...base, name: `A_b-9${'x'.repeat(59)}` }).name).toHaveLength(64);
  });

  it.each(['', 'has space', 'dot.name', 'x'.repeat(65), 'ümlaut'])('rejects the name %j', (name) => {
    expect(() => defineTool({ ...base, name })).toThrow(/^Tool name ".*" is invalid: use 1 to 64 letters, digits, '_' or '-'\.$/);
  });

  it('names the tool in every other definition error', () => {
    expect(() => defineTool({ ...base, name: 't', input: { parse: () => 1 } as never })).toThrow(
      "Tool 't': input must be a zod schema",
    );
    expect(() => defineTool({ ...base, name: 't', execute: 'run' as never })).toThrow("Tool 't': execute must be a function");
    expect(() => defineTool({ ...base, name: 't', timeoutMs: 0 })).toThrow("Tool 't': timeoutMs must be a whole number");
    expect(() => defineTool({ ...base, name: 't', retry: { attempts: 0, backoffMs: 0 } })).toThrow("Tool 't': retry.attempts");
    expect(() => defineTool({ ...base, name: 't', retry: { attempts: 2, backoffMs: -1 } })).toThrow("Tool 't': retry.backoffMs");
    expect(() => defineTool({ ...base, name: 't', needsApproval: 'yes' as never })).toThrow("Tool 't': needsApproval");
    expect(() => defineTool({ ...base, name: 't', input: z.object({ at: z.date() }) })).toThrow(
      "Tool 't': input cannot be written as JSON Schema",
    );
    expect(() => defineTool({ ...base, name: 't', color: 'red' } as never)).toThrow("Tool 't': unknown option 'color'");
  });

  it.each([
    ['z.object', z.object({ a: z.number() })],
    ['z.looseObject', z.looseObject({})],
    ['z.strictObject', z.strictObject({ a: z.string() })],
    ['z.record', z.record(z.string(), z.number())],
    ['an intersection of objects', z.object({ a: z.string() }).and(z.object({ b: z.string() }))],
    ['a refined object', z.object({ a: z.string() }).refine(() => true)],
    ['an object with a default', z.object({ a: z.number() }).default({ a: 1 })],
    ['an object piped through a transform', z.object({ a: z.string() }).transform((input) => input.a)],
    ['a lazy object', z.lazy(() => z.object({ a: z.string() }))],
    ['an object from z.fromJSONSchema', z.fromJSONSchema({ type: 'object', properties: { a: { type: 'string' } } })],
  ])('accepts %s as input: its JSON Schema has type "object"', (_, input) => {
    expect(defineTool({ ...base, name: 't', input }).inputSchema['type']).toBe('object');
  });

  it.each([
    ['z.string()', z.string(), 'of type "string"'],
    ['z.number()', z.number(), 'of type "number"'],
    ['z.array(...)', z.array(z.string()), 'of type "array"'],
    ['a union of non-objects', z.union([z.string(), z.number()]), 'of type ["string","number"]'],
    [
      'a union of objects',
      z.union([z.object({ a: z.string() }), z.object({ b: z.string() })]),
      'a combination (anyOf) with no type of its own',
    ],
    ['a nullable object', z.object({}).nullable(), 'a combination (anyOf) with no type of its own'],
    ['z.unknown()', z.unknown(), 'without a type (it accepts any value)'],
  ])('refuses %s as input, saying why and what to write instead', (_, input, described) => {
    expect(() => defineTool({ ...base, name: 't', input })).toThrow(
      `Tool 't': input must be an object schema, but its JSON Schema is ${described}: model providers require tool inputs to be JSON objects. ` +
        'Wrap the value in an object, like z.object({ value: z.string() }), and read input.value in execute.',
    );
  });
});

describe('createDispatcher', () => {
  it('rejects duplicate names, including names that differ only in case', () => {
    expect(() => createDispatcher({ tools: [echo, echo] })).toThrow("createDispatcher: tool 'echo' is defined twice");
    const Echo = defineTool({ ...base, name: 'Echo' });
    expect(() => createDispatcher({ tools: [echo, Echo] })).toThrow("tools 'echo' and 'Echo' differ only in case");
  });

  it('rejects bad options, naming them', () => {
    expect(() => createDispatcher({ tools: [add], concurrency: 0 })).toThrow(
      'createDispatcher: concurrency must be a whole number from 1',
    );
    expect(() => createDispatcher({ tools: [add], maxOutputChars: 1.5 })).toThrow('maxOutputChars');
    expect(() => createDispatcher({ tools: [add], defaultTimeoutMs: 2 ** 40 })).toThrow('defaultTimeoutMs');
    expect(() => createDispatcher({ tools: [add], permissions: { deny: ['add:'] } })).toThrow("Permission pattern 'add:'");
    expect(() => createDispatcher({ tools: [add], budget: { perTool: { ad: 1 } } })).toThrow(
      "budget.perTool names 'ad', which is not a defined tool",
    );
    expect(() => createDispatcher({ tools: [add], grants: [{ scope: 'all' } as never] })).toThrow(
      'Grant {"scope":"all"} is invalid',
    );
    expect(() => createDispatcher({ tools: [add], colour: 1 } as never)).toThrow("unknown option 'colour'");
    expect(() => createDispatcher({ tools: [add, { name: 'fake' } as never] })).toThrow(
      'tools[1] is an object with keys name, not a tool: make every entry with defineTool',
    );
    expect(() =>
      createDispatcher({ tools: [add], hooks: { after: [{ name: 'ok', run: () => undefined }, { run: 1 } as never] } }),
    ).toThrow('hooks.after[1] is an object with keys run; every hook must be an object { name');
    expect(() => createDispatcher({ tools: [add], hooks: { before: {} as never } })).toThrow(
      'hooks.before and hooks.after must be arrays',
    );
    expect(() => createDispatcher({ tools: [add], grants: { scope: 'session' } as never })).toThrow('grants must be an array');
  });
});
