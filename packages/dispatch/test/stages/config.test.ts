// Options validation on its own: a frozen configuration, or an error naming the bad entry.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { resolveConfig } from '../../src/config.js';
import { defineTool } from '../../src/define.js';
import type { DispatcherOptions } from '../../src/types.js';

const add = defineTool({
  name: 'add',
  description: 'Adds.',
  input: z.object({ a: z.number() }),
  readOnly: true,
  loopExempt: true,
  execute: ({ a }) => a,
});

describe('resolveConfig', () => {
  it('fills the defaults and freezes what it returns', () => {
    const config = resolveConfig({ tools: [add] });
    expect(config).toMatchObject({
      availableText: 'add',
      loopExempt: ['add'],
      concurrency: 8,
      maxOutputChars: 8000,
      defaultTimeoutMs: 30_000,
      nonInteractive: false,
      defaultDecision: 'ask',
      yolo: false,
      permissionSets: [],
    });
    expect(config.budgetUsage).toEqual({ total: 0, perTool: {} });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.hooks.before)).toBe(true);
    expect(Object.isFrozen(config.permissionSets)).toBe(true);
  });

  it('copies hook lists, so changing the options later changes nothing', () => {
    const before: { name: string; run: () => undefined }[] = [];
    const config = resolveConfig({ tools: [add], hooks: { before } });
    before.push({ name: 'late', run: () => undefined });
    expect(config.hooks.before).toEqual([]);
  });

  it('names the bad entry in its error', () => {
    const bad: [unknown, string][] = [
      [{ tools: [add], extra: 1 }, "createDispatcher: unknown option 'extra'."],
      [{ tools: [add, { name: 'x' }] }, 'createDispatcher: tools[1] is an object with keys name, not a tool'],
      [{ tools: [add, add] }, "createDispatcher: tool 'add' is defined twice"],
      [
        { tools: [add], hooks: { after: [{ name: '', run: () => undefined }] } },
        'createDispatcher: hooks.after[0] is an object with keys name, run;',
      ],
      [
        { tools: [add], budget: { perTool: { nope: 1 } } },
        "createDispatcher: budget.perTool names 'nope', which is not a defined tool. Defined tools: add.",
      ],
      [
        { tools: [add], budgetUsage: { total: -1, perTool: {} } },
        'createDispatcher: budgetUsage.total must be a whole number from 0',
      ],
      [{ tools: [add], grants: [{ scope: 'all' }] }, 'Grant {"scope":"all"} is invalid'],
    ];
    for (const [options, message] of bad) expect(() => resolveConfig(options as DispatcherOptions)).toThrow(message);
  });
});
