// Stages 1–5 (normalise, resolve, validate, before-hooks, policy) and the three verdicts.
import type { ToolCall } from '@turnkit/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type BeforeHook } from '../src/index.js';
import { add, call, setup } from './fixtures.js';

function spyTool(name = 'spy') {
  const seen: unknown[] = [];
  const tool = defineTool({
    name,
    description: 'Records its input.',
    input: z.object({ n: z.number() }),
    execute: (input) => {
      seen.push(input);
      return 'ok';
    },
  });
  return { tool, seen };
}

describe('stage 1: normalise', () => {
  it('answers a call whose arguments were not JSON with an error that keeps id and name; the tool never runs', async () => {
    const { tool, seen } = spyTool();
    const { dispatcher, records, ctx } = setup({ tools: [tool] });
    const bad = call('spy', '{"n": 1', { inputError: 'Unexpected end of JSON input' });
    const { results } = await dispatcher.dispatch([bad], ctx);
    expect(results).toEqual([
      {
        callId: bad.id,
        name: 'spy',
        isError: true,
        errorKind: 'invalid_input',
        output:
          "The arguments for 'spy' were not valid JSON (Unexpected end of JSON input). Call 'spy' again with the arguments as one JSON object.",
      },
    ]);
    expect(seen).toEqual([]);
    expect(records).toEqual([
      { callId: bad.id, tool: 'spy', decision: 'deny', source: 'invalid_json', reason: results[0]?.output },
    ]);
  });

  it('answers a malformed call (not an object, no string id) with an invalid_call error', async () => {
    const { dispatcher, records, ctx } = setup();
    const { results } = await dispatcher.dispatch([null, { id: 7, name: 'echo', input: {} }] as unknown as ToolCall[], ctx);
    expect(results.map((r) => [r.callId, r.name, r.isError])).toEqual([
      ['', '', true],
      ['', 'echo', true],
    ]);
    expect(records.map((r) => r.source)).toEqual(['invalid_call', 'invalid_call']);
  });

  it('denies a call whose fields throw when read', async () => {
    const { dispatcher, ctx } = setup();
    const hostile = Object.defineProperty({ id: 'h1', input: {} }, 'name', {
      get() {
        throw new Error('boom');
      },
      enumerable: true,
    });
    const { results } = await dispatcher.dispatch([hostile as unknown as ToolCall], ctx);
    expect(results).toHaveLength(1);
    expect(results[0]?.isError).toBe(true);
  });
});

describe('stage 2: resolve', () => {
  it('names the unknown tool and lists the available ones', async () => {
    const { dispatcher, records, ctx } = setup();
    const c = call('nope', {});
    const { results } = await dispatcher.dispatch([c], ctx);
    expect(results[0]).toEqual({
      callId: c.id,
      name: 'nope',
      isError: true,
      errorKind: 'unknown_tool',
      output: "Unknown tool 'nope'. Available tools: add, echo, shell.",
    });
    expect(records[0]?.source).toBe('unknown_tool');
  });

  it('treats Object.prototype names as unknown tools', async () => {
    const { dispatcher, ctx } = setup();
    const { results } = await dispatcher.dispatch([call('__proto__', {}), call('constructor', {}), call('toString', {})], ctx);
    expect(results.map((r) => r.output)).toEqual([
      "Unknown tool '__proto__'. Available tools: add, echo, shell.",
      "Unknown tool 'constructor'. Available tools: add, echo, shell.",
      "Unknown tool 'toString'. Available tools: add, echo, shell.",
    ]);
  });
});

describe('stage 3: validate', () => {
  it('lists every issue with its path and never runs the tool', async () => {
    const { tool, seen } = spyTool();
    const nested = defineTool({
      name: 'nested',
      description: 'Nested input.',
      input: z.object({ user: z.object({ age: z.number().int() }), tags: z.array(z.string()) }),
      execute: () => seen.push('nested'),
    });
    const { dispatcher, records, ctx } = setup({ tools: [tool, nested] });
    const { results } = await dispatcher.dispatch(
      [call('nested', { user: { age: 1.5 }, tags: ['a', 2] }), call('spy', 'not an object')],
      ctx,
    );
    expect(results[0]?.output).toBe(
      "Invalid input for 'nested':\n- user.age: Invalid input: expected int, received number\n- tags[1]: Invalid input: expected string, received number\nFix the arguments and call 'nested' again.",
    );
    expect(results[1]?.output).toContain('- (root): ');
    expect(seen).toEqual([]);
    expect(records.map((r) => r.source)).toEqual(['invalid_input', 'invalid_input']);
  });

  it('turns a refinement that throws into an error result', async () => {
    const picky = defineTool({
      name: 'picky',
      description: 'Throws while validating.',
      input: z.object({ value: z.string() }).refine(() => {
        throw new Error('refine exploded');
      }),
      execute: () => 'never',
    });
    const { dispatcher, ctx } = setup({ tools: [picky] });
    const { results } = await dispatcher.dispatch([call('picky', { value: 'x' })], ctx);
    expect(results[0]?.output).toBe("The input for 'picky' could not be checked (refine exploded). Send a simpler input.");
  });
});

describe('stage 3 with async and sync schemas', () => {
  it('parses an async schema asynchronously, every time, with the same results as a sync one', async () => {
    let checks = 0;
    const slow = defineTool({
      name: 'slow',
      description: 'Checks its input asynchronously.',
      input: z.object({ n: z.number() }).refine(async ({ n }) => {
        checks++;
        await Promise.resolve();
        return n > 0;
      }, 'n must be positive'),
      execute: ({ n }) => n * 2,
    });
    const { dispatcher, ctx } = setup({ tools: [slow, add] });
    for (let round = 0; round < 3; round++) {
      const { results } = await dispatcher.dispatch(
        [call('slow', { n: 2 }), call('slow', { n: -1 }), call('add', { a: 1, b: 2 })],
        ctx,
      );
      expect(results.map((r) => r.output)).toEqual([
        4,
        "Invalid input for 'slow':\n- (root): n must be positive\nFix the arguments and call 'slow' again.",
        3,
      ]);
    }
    // Once per call.
    expect(checks).toBe(6);
  });

  it('coerces towards an async schema too', async () => {
    const slow = defineTool({
      name: 'slow',
      description: 'Checks its input asynchronously.',
      input: z.object({ n: z.number() }).refine(async () => true),
      coerce: true,
      execute: ({ n }) => n + 1,
    });
    const { dispatcher, ctx } = setup({ tools: [slow] });
    const { results } = await dispatcher.dispatch([call('slow', { n: '41' })], ctx);
    expect(results[0]?.output).toBe(42);
  });
});

describe('stage 4: before-hooks', () => {
  const runOrder: string[] = [];
  const tag = (name: string): BeforeHook => ({
    name,
    run: () => {
      runOrder.push(name);
      return undefined;
    },
  });

  it('runs hooks in order and lets them continue', async () => {
    runOrder.length = 0;
    const { dispatcher, ctx } = setup({
      hooks: { before: [tag('first'), tag('second'), { name: 'third', run: () => ({ kind: 'continue' }) }] },
    });
    const { results } = await dispatcher.dispatch([call('echo', { text: 'hi' })], ctx);
    expect(runOrder).toEqual(['first', 'second']);
    expect(results[0]?.output).toBe('hi');
  });

  it('re-validates a rewritten input and passes it to the tool', async () => {
    const { tool, seen } = spyTool();
    const double: BeforeHook = {
      name: 'double',
      run: ({ input }) => ({ kind: 'rewrite', input: { n: (input as { n: number }).n * 2 } }),
    };
    const { dispatcher, ctx } = setup({ tools: [tool], hooks: { before: [double] } });
    await dispatcher.dispatch([call('spy', { n: 21 })], ctx);
    expect(seen).toEqual([{ n: 42 }]);
  });

  it('denies a call a hook rewrote into invalid input', async () => {
    const { tool, seen } = spyTool();
    const broken: BeforeHook = { name: 'broken', run: () => ({ kind: 'rewrite', input: { n: 'x' } }) };
    const { dispatcher, records, ctx } = setup({ tools: [tool], hooks: { before: [broken] } });
    const { results } = await dispatcher.dispatch([call('spy', { n: 1 })], ctx);
    expect(results[0]?.output).toMatch(
      /^Call to 'spy' denied: before-hook 'broken' rewrote its input into an invalid one\. Invalid input for 'spy':\n- n: /,
    );
    expect(seen).toEqual([]);
    expect(records[0]).toMatchObject({ decision: 'deny', source: 'hook:broken' });
  });

  it('lets a hook halt the call with its own result', async () => {
    const { tool, seen } = spyTool();
    const cache: BeforeHook = { name: 'cache', run: () => ({ kind: 'halt', output: { cached: true }, isError: false }) };
    const { dispatcher, records, ctx } = setup({ tools: [tool], hooks: { before: [cache] } });
    const c = call('spy', { n: 1 });
    const { results } = await dispatcher.dispatch([c], ctx);
    expect(results).toEqual([{ callId: c.id, name: 'spy', output: { cached: true }, isError: false }]);
    expect(seen).toEqual([]);
    expect(records[0]).toMatchObject({ decision: 'deny', source: 'hook:cache' });
  });

  it('denies the call when a hook throws (fail closed), naming the hook', async () => {
    const { tool, seen } = spyTool();
    const angry: BeforeHook = {
      name: 'angry',
      run: async () => {
        throw new Error('db down');
      },
    };
    const { dispatcher, records, ctx } = setup({ tools: [tool], hooks: { before: [angry] } });
    const { results } = await dispatcher.dispatch([call('spy', { n: 1 })], ctx);
    expect(results[0]).toMatchObject({
      isError: true,
      output: "Call to 'spy' denied: before-hook 'angry' failed (db down). Do not retry it unchanged.",
    });
    expect(seen).toEqual([]);
    expect(records[0]).toMatchObject({ decision: 'deny', source: 'hook:angry' });
  });

  it('denies the call when a hook returns something unrecognised (fail closed)', async () => {
    const { tool, seen } = spyTool();
    const odd = { name: 'odd', run: () => ({ kind: 'maybe' }) } as unknown as BeforeHook;
    const { dispatcher, ctx } = setup({ tools: [tool], hooks: { before: [odd] } });
    const { results } = await dispatcher.dispatch([call('spy', { n: 1 })], ctx);
    expect(results[0]?.output).toBe(
      "Call to 'spy' denied: before-hook 'odd' returned an unrecognised value. Do not retry it unchanged.",
    );
    expect(seen).toEqual([]);
  });
});

describe('stage 5: policy, first match wins', () => {
  it('a deny pattern wins over a grant, an allow pattern and the policy', async () => {
    const { dispatcher, records, ctx } = setup({
      permissions: { deny: ['shell:cmd=rm*'], allow: ['shell'] },
      grants: [{ scope: 'session' }],
      policy: () => ({ kind: 'allow' }),
    });
    const { results } = await dispatcher.dispatch([call('shell', { cmd: 'RM -rf /' }), call('shell', { cmd: 'ls' })], ctx);
    expect(results[0]).toMatchObject({
      isError: true,
      output: "Call to 'shell' denied: denied by rule 'shell:cmd=rm*'. Do not retry it unchanged; continue without it.",
    });
    expect(results[1]).toMatchObject({ isError: false, output: 'ran ls' });
    expect(records.map((r) => `${r.decision} ${r.source}`)).toEqual(['deny rule:deny:shell:cmd=rm*', 'allow grant:session']);
  });

  it('array arguments: deny and ask rules match on any element, allow rules and grants need every element', async () => {
    const git = defineTool({
      name: 'git',
      description: 'git without a shell.',
      input: z.object({ args: z.array(z.unknown()) }),
      execute: ({ args }) => args.length,
    });
    let deep: unknown = 'x';
    for (let i = 0; i < 200; i++) deep = [deep];
    const { dispatcher, records, ctx } = setup({
      tools: [git],
      permissions: { deny: ['git:args=--force'], allow: ['git:args=status', 'git:args=log'], ask: ['git:args=push'] },
      grants: [{ scope: 'tool', pattern: 'git:args=diff' }],
    });
    const { results, parked } = await dispatcher.dispatch(
      [
        call('git', { args: ['push', '--force'] }),
        call('git', { args: ['status'] }),
        call('git', { args: ['status', 'push'] }),
        call('git', { args: ['diff'] }),
        call('git', { args: ['diff', 'status'] }),
        call('git', { args: ['log', 'log'] }),
      ],
      ctx,
    );
    expect(records.map((r) => `${r.decision} ${r.source}`)).toEqual([
      'deny rule:deny:git:args=--force',
      'allow rule:allow:git:args=status',
      'ask rule:ask:git:args=push',
      'allow grant:pattern:git:args=diff',
      'allow default',
      'allow rule:allow:git:args=log',
    ]);
    expect(results).toHaveLength(5);
    expect(parked).toHaveLength(1);

    // An argument nested too deep to read: deny and ask rules fail closed, allow rules do not match.
    const strict = setup({ tools: [git], permissions: { allow: ['git:args=*'], ask: ['git:args=push'] } });
    const held = await strict.dispatcher.dispatch([call('git', { args: [deep] })], strict.ctx);
    expect(held.parked).toHaveLength(1);
    expect(strict.records.map((r) => r.source)).toEqual(['rule:ask:git:args=push']);
  });

  it('grants come before allow and ask patterns', async () => {
    const { dispatcher, records, ctx } = setup({ permissions: { ask: ['shell'] }, grants: [{ scope: 'tool', tool: 'shell' }] });
    await dispatcher.dispatch([call('shell', { cmd: 'ls' })], ctx);
    expect(records[0]?.source).toBe('grant:tool:shell');
  });

  it('a pattern grant allows only matching calls', async () => {
    const { dispatcher, records, ctx } = setup({
      permissions: { ask: ['shell'] },
      grants: [{ scope: 'tool', pattern: 'shell:cmd=ls*' }],
    });
    const { results, parked } = await dispatcher.dispatch(
      [call('shell', { cmd: 'ls -la' }), call('shell', { cmd: 'cat x' })],
      ctx,
    );
    expect(results.map((r) => r.output)).toEqual(['ran ls -la']);
    expect(parked.map((p) => p.call.input)).toEqual([{ cmd: 'cat x' }]);
    expect(records.map((r) => r.source)).toEqual(['grant:pattern:shell:cmd=ls*', 'rule:ask:shell']);
  });

  it('an allow pattern comes before ask patterns and the policy', async () => {
    const { dispatcher, records, ctx } = setup({
      permissions: { allow: ['shell:cmd=ls'], ask: ['shell'] },
      policy: () => ({ kind: 'deny', reason: 'no' }),
    });
    await dispatcher.dispatch([call('shell', { cmd: 'ls' })], ctx);
    expect(records[0]).toEqual({
      callId: expect.any(String),
      tool: 'shell',
      decision: 'allow',
      source: 'rule:allow:shell:cmd=ls',
    });
  });

  it('an ask pattern parks the call (the needs_approval verdict)', async () => {
    const { dispatcher, records, ctx } = setup({ permissions: { ask: ['SHELL'] } });
    const c = call('shell', { cmd: 'ls' });
    const verdict = await dispatcher.classify(c, ctx);
    expect(verdict).toEqual({
      kind: 'needs_approval',
      call: c,
      input: c.input,
      reason: "matches ask rule 'SHELL'",
      source: 'rule:ask:SHELL',
    });
    const { results, parked } = await dispatcher.dispatch([c], ctx);
    expect(results).toEqual([]);
    expect(parked).toEqual([{ call: c, input: c.input, reason: "matches ask rule 'SHELL'" }]);
    expect(records).toEqual([
      { callId: c.id, tool: 'shell', decision: 'ask', source: 'rule:ask:SHELL', reason: "matches ask rule 'SHELL'" },
    ]);
  });

  it('the policy function can allow, deny, ask or pass', async () => {
    const { dispatcher, records, ctx } = setup({
      policy: ({ call: c }) => {
        if (c.name === 'add') return { kind: 'allow' };
        if (c.name === 'shell') return { kind: 'deny', reason: 'shell is off today' };
        if ((c.input as { text?: string }).text === 'ask') return { kind: 'ask', reason: 'echo asks' };
        return undefined;
      },
    });
    const { results, parked } = await dispatcher.dispatch(
      [call('add', { a: 1, b: 2 }), call('shell', { cmd: 'ls' }), call('echo', { text: 'ask' }), call('echo', { text: 'pass' })],
      ctx,
    );
    expect(results.map((r) => r.output)).toEqual([
      3,
      "Call to 'shell' denied: shell is off today. Do not retry it unchanged; continue without it.",
      'pass',
    ]);
    expect(parked.map((p) => p.reason)).toEqual(['echo asks']);
    expect(records.map((r) => `${r.decision} ${r.source}`)).toEqual([
      'allow policy',
      'deny policy',
      'ask policy',
      'allow readonly',
    ]);
  });

  it('a policy that throws or returns garbage denies (fail closed)', async () => {
    let n = 0;
    const { dispatcher, records, ctx } = setup({
      policy: () => {
        n++;
        if (n === 1) throw new Error('policy db down');
        return { kind: 'perhaps' } as never;
      },
    });
    const { results } = await dispatcher.dispatch([call('add', { a: 1, b: 2 }), call('add', { a: 1, b: 2 })], ctx);
    expect(results.map((r) => r.output)).toEqual([
      "Call to 'add' denied: the policy check failed (policy db down). Do not retry it unchanged; continue without it.",
      "Call to 'add' denied: the policy returned an unrecognised verdict. Do not retry it unchanged; continue without it.",
    ]);
    expect(records.map((r) => `${r.decision} ${r.source}`)).toEqual(['deny policy_error', 'deny policy_error']);
  });

  it("the tool's needsApproval asks; a needsApproval that throws denies", async () => {
    const guarded = defineTool({
      name: 'pay',
      description: 'Pays.',
      input: z.object({ amount: z.number() }),
      needsApproval: ({ amount }) => {
        if (amount < 0) throw new Error('negative');
        return amount > 100;
      },
      execute: ({ amount }) => `paid ${amount}`,
    });
    const always = defineTool({
      name: 'wipe',
      description: 'Wipes.',
      input: z.object({}),
      needsApproval: true,
      execute: () => 'wiped',
    });
    const { dispatcher, records, ctx } = setup({ tools: [guarded, always] });
    const { results, parked } = await dispatcher.dispatch(
      [call('pay', { amount: 5 }), call('pay', { amount: 500 }), call('pay', { amount: -1 }), call('wipe', {})],
      ctx,
    );
    expect(results.map((r) => r.output)).toEqual([
      'paid 5',
      "Call to 'pay' denied: its needsApproval check failed (negative). Do not retry it unchanged; continue without it.",
    ]);
    expect(parked.map((p) => p.reason)).toEqual(["tool 'pay' needs approval for this input", "tool 'wipe' needs approval"]);
    expect(records.map((r) => `${r.decision} ${r.source}`)).toEqual([
      'allow default',
      'ask needs_approval',
      'deny needs_approval_error',
      'ask needs_approval',
    ]);
  });

  it('nonInteractive turns every ask into a denial that says approval was needed', async () => {
    const { dispatcher, records, ctx } = setup({ nonInteractive: true, permissions: { ask: ['shell'] } });
    const { results, parked } = await dispatcher.dispatch([call('shell', { cmd: 'ls' })], ctx);
    expect(parked).toEqual([]);
    expect(results[0]?.output).toBe(
      "Call to 'shell' denied: it needs approval (matches ask rule 'shell'), but no one can approve calls in this non-interactive run. Continue without it.",
    );
    expect(records[0]).toMatchObject({ decision: 'deny', source: 'non_interactive' });
  });

  it('with no rule, a read-only tool is allowed by `readonly`, any other by `default`', async () => {
    const { dispatcher, records, ctx } = setup();
    await dispatcher.dispatch([call('echo', { text: 'a' }), call('add', { a: 1, b: 1 })], ctx);
    expect(records.map((r) => r.source)).toEqual(['readonly', 'default']);
  });
});

describe('classify', () => {
  it('returns an execute verdict with the validated input and has no side effect', async () => {
    const { dispatcher, records, ctx } = setup({ budget: { maxCalls: 1 } });
    const c = call('add', { a: 1, b: 2, extra: true });
    const first = await dispatcher.classify(c, ctx);
    const second = await dispatcher.classify(c, ctx);
    expect(first).toEqual({ kind: 'execute', call: c, input: { a: 1, b: 2 }, source: 'default' });
    expect(second).toEqual(first);
    expect(records).toEqual([]);
    expect(dispatcher.budgetUsage()).toEqual({ total: 0, perTool: {} });
  });

  it('returns a deny verdict holding the result', async () => {
    const { dispatcher, ctx } = setup();
    const c = call('nope', {});
    expect(await dispatcher.classify(c, ctx)).toEqual({
      kind: 'deny',
      source: 'unknown_tool',
      result: {
        callId: c.id,
        name: 'nope',
        isError: true,
        errorKind: 'unknown_tool',
        output: "Unknown tool 'nope'. Available tools: add, echo, shell.",
      },
    });
  });
});
