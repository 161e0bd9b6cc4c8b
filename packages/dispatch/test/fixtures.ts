// Shared tools, helpers and arbitraries for the dispatch tests.
import type { ToolCall } from '@turnkit/core';
import { z } from 'zod';
import { createDispatcher, defineTool, type DispatcherOptions } from '../src/index.js';
import type { DecisionRecord } from '../src/internal.js';

export const echo = defineTool({
  name: 'echo',
  description: 'Returns its text.',
  input: z.object({ text: z.string() }),
  readOnly: true,
  execute: ({ text }) => text,
});

export const shell = defineTool({
  name: 'shell',
  description: 'Runs a command.',
  input: z.object({ cmd: z.string(), cwd: z.string().optional() }),
  execute: ({ cmd }) => `ran ${cmd}`,
});

export const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

let nextId = 0;
/** A call with a fresh id. */
export function call(name: string, input: unknown, extra: Partial<ToolCall> = {}): ToolCall {
  return { id: `c${++nextId}`, name, input: input as ToolCall['input'], ...extra };
}

/**
 * A dispatcher over echo, shell and add (plus `tools`), recording every decision. It allows what
 * no rule decided (`defaultDecision: 'allow'`): most tests here are about other stages; the tests
 * of the secure default (`'ask'`) pass `defaultDecision` themselves.
 */
export function setup(options: Partial<DispatcherOptions> = {}) {
  const records: DecisionRecord[] = [];
  const dispatcher = createDispatcher({
    tools: [echo, shell, add],
    defaultDecision: 'allow',
    onDecision: (r) => records.push(r),
    ...options,
  });
  return { dispatcher, records, ctx: { turnId: 't1' } };
}
