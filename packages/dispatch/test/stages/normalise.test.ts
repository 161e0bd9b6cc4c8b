// Stages 1–3 on their own: normalise, resolve, validate.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/define.js';
import { describeIssues, normalise, resolve, validate } from '../../src/stages/normalise.js';

const add = defineTool({
  name: 'add',
  description: 'Adds.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

describe('normalise', () => {
  it('copies the fields it reads into a plain call, dropping the rest', () => {
    expect(normalise({ id: 'c1', name: 'add', input: { a: 1 }, extra: true })).toEqual({
      kind: 'ok',
      call: { id: 'c1', name: 'add', input: { a: 1 } },
    });
  });

  it('denies what is not a call (invalid_call) and arguments that were not JSON (invalid_json)', () => {
    expect(normalise(null)).toMatchObject({ kind: 'deny', source: 'invalid_call', result: { callId: '', name: '' } });
    expect(normalise({ id: 'c1', name: 5 })).toMatchObject({
      kind: 'deny',
      source: 'invalid_call',
      result: { callId: 'c1', name: '' },
    });
    expect(normalise({ id: 'c1', name: 'add', input: {}, inputError: 'Unexpected token' })).toMatchObject({
      kind: 'deny',
      source: 'invalid_json',
      result: {
        output:
          "The arguments for 'add' were not valid JSON (Unexpected token). Call 'add' again with the arguments as one JSON object.",
        isError: true,
      },
    });
  });
});

describe('resolve', () => {
  it('finds a tool by exact name and lists the tools otherwise, even for prototype names', () => {
    const tools = new Map([['add', add]]);
    expect(resolve({ id: 'c1', name: 'add', input: {} }, tools, 'add')).toEqual({ kind: 'ok', tool: add });
    for (const name of ['Add', '__proto__', 'constructor']) {
      expect(resolve({ id: 'c1', name, input: {} }, tools, 'add')).toMatchObject({
        kind: 'deny',
        source: 'unknown_tool',
        result: { output: `Unknown tool '${name}'. Available tools: add.` },
      });
    }
  });
});

describe('validate', () => {
  it('gives the parsed input, or one line per issue', async () => {
    expect(await validate(add, 'add', { a: 1, b: 2 })).toEqual({ ok: true, input: { a: 1, b: 2 } });
    expect(await validate(add, 'add', { a: 'x' })).toEqual({
      ok: false,
      text: "Invalid input for 'add':\n- a: Invalid input: expected number, received string\n- b: Invalid input: expected number, received undefined\nFix the arguments and call 'add' again.",
    });
  });

  it('never throws, even when the input cannot be read', async () => {
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error('trap');
        },
        ownKeys: () => {
          throw new Error('trap');
        },
      },
    );
    const checked = await validate(add, 'add', hostile);
    expect(checked.ok).toBe(false);
  });

  it('lists at most 20 issues', () => {
    const issues = Array.from({ length: 25 }, (_, i) => ({ path: ['list', i], message: 'bad' }));
    const lines = describeIssues('x', issues).split('\n');
    expect(lines).toHaveLength(23);
    expect(lines[1]).toBe('- list[0]: bad');
    expect(lines[21]).toBe('- … and 5 more');
  });
});
