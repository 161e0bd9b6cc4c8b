// The execution wrapper, error kinds and the queryable registry.
import type { ToolCall } from '@turnkit/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDispatcher, defineTool, ToolError } from '../src/index.js';
import {
  isToolErrorKind,
  TOOL_ERROR_KINDS,
  type ExecutionOutcome,
  type ExecutionWrapper,
  type ToolExecution,
} from '../src/internal.js';
import { add, call, echo, setup, shell } from './fixtures.js';

/** A tool that counts its runs and answers (or throws) what `body` says. */
function counted(body: (input: { n: number }) => unknown) {
  let runs = 0;
  const tool = defineTool({
    name: 'counted',
    description: 'Counts its runs.',
    input: z.object({ n: z.number() }),
    execute: (input) => {
      runs++;
      return body(input);
    },
  });
  return { tool, runs: () => runs };
}

describe('ToolError', () => {
  it('carries a kind (default tool_error) and a retry-after, and checks both', () => {
    const plain = new ToolError('boom');
    expect([plain.kind, plain.retryAfterMs, plain.name, plain instanceof Error]).toEqual([
      'tool_error',
      undefined,
      'ToolError',
      true,
    ]);
    const limited = new ToolError('busy', { kind: 'rate_limited', retryAfterMs: 250, cause: 'x' });
    expect([limited.kind, limited.retryAfterMs, limited.cause]).toEqual(['rate_limited', 250, 'x']);
    expect(() => new ToolError('x', { kind: 'flaky' as never })).toThrow(/kind must be one of invalid_input, .*got "flaky"/);
    expect(() => new ToolError('x', { retryAfterMs: -1 })).toThrow(/retryAfterMs must be a number of milliseconds >= 0, got -1/);
    expect(TOOL_ERROR_KINDS.every(isToolErrorKind)).toBe(true);
    expect([isToolErrorKind('nope'), isToolErrorKind(3)]).toEqual([false, false]);
  });

  it("gives the result the thrown kind and names the error's type in the text", async () => {
    const cases: [unknown, string, string][] = [
      [new ToolError('no access to /etc', { kind: 'permission' }), 'permission', 'ToolError (permission): no access to /etc'],
      [new TypeError('x is not a function'), 'tool_error', 'TypeError: x is not a function'],
      [new (class QuotaError extends Error {})('over quota'), 'tool_error', 'QuotaError: over quota'],
      ['a plain string', 'tool_error', 'a plain string'],
    ];
    for (const [thrown, kind, text] of cases) {
      const { tool } = counted(() => {
        throw thrown;
      });
      const { dispatcher, ctx } = setup({ tools: [tool] });
      const { results } = await dispatcher.dispatch([call('counted', { n: 1 })], ctx);
      expect(results[0]).toMatchObject({ isError: true, errorKind: kind, output: `Error calling tool 'counted': ${text}` });
    }
  });

  it('sets errorKind on every error result and on no success', async () => {
    const { dispatcher, ctx } = setup({ permissions: { deny: ['shell'] }, budget: { perTool: { echo: 1 } } });
    const calls: ToolCall[] = [
      call('echo', { text: 'hi' }),
      call('echo', { text: 'again' }),
      call('nope', {}),
      call('add', { a: 'one', b: 2 }),
      call('shell', { cmd: 'ls' }),
      call('add', '{"a"', { inputError: 'Unexpected end of JSON input' }),
    ];
    const { results } = await dispatcher.dispatch(calls, ctx);
    expect(results.map((r) => [r.isError, r.errorKind])).toEqual([
      [false, undefined],
      [true, 'budget'],
      [true, 'unknown_tool'],
      [true, 'invalid_input'],
      [true, 'denied'],
      [true, 'invalid_input'],
    ]);
    expect(Object.hasOwn(results[0] ?? {}, 'errorKind')).toBe(false);
  });
});

describe('wrapExecution', () => {
  it('sees the call, the input that runs (after hooks) and the outcome, once per executed call', async () => {
    const seen: { execution: ToolExecution; outcome: ExecutionOutcome }[] = [];
    const wrapExecution: ExecutionWrapper = async (execution, run) => {
      const outcome = await run();
      seen.push({ execution, outcome });
      return 'ignored';
    };
    const { dispatcher } = setup({
      wrapExecution,
      permissions: { deny: ['shell'] },
      hooks: {
        before: [
          {
            name: 'double',
            run: ({ call: c, input }) =>
              c.name === 'add' ? { kind: 'rewrite', input: { ...(input as object), b: 20 } } : undefined,
          },
        ],
      },
    });
    const c = call('add', { a: 1, b: 2 });
    const { results } = await dispatcher.dispatch([c, call('shell', { cmd: 'ls' })], { turnId: 'turn-7' });
    expect(results.map((r) => r.output)).toEqual([21, expect.stringContaining('denied')]);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.execution).toEqual({ turnId: 'turn-7', call: c, tool: 'add', input: { a: 1, b: 20 } });
    expect(seen[0]?.outcome).toMatchObject({ isError: false, output: 21, attempts: 1 });
    expect(seen[0]?.outcome.durationMs).toBeGreaterThanOrEqual(0);
    expect(Object.hasOwn(seen[0]?.outcome ?? {}, 'errorKind')).toBe(false);
  });

  it('reports an error outcome with its kind and every try', async () => {
    let tries = 0;
    const flaky = defineTool({
      name: 'flaky',
      description: 'Fails twice.',
      input: z.object({}),
      retry: { attempts: 3, backoffMs: 0, retryOn: () => true },
      execute: () => {
        tries++;
        throw new ToolError('still down', { kind: 'transient' });
      },
    });
    const outcomes: ExecutionOutcome[] = [];
    const { dispatcher, ctx } = setup({ tools: [flaky], wrapExecution: async (_e, run) => outcomes.push(await run()) });
    const { results } = await dispatcher.dispatch([call('flaky', {})], ctx);
    expect(tries).toBe(3);
    expect(outcomes).toMatchObject([
      {
        isError: true,
        errorKind: 'transient',
        attempts: 3,
        output: "Error calling tool 'flaky' (3 tries): ToolError (transient): still down",
      },
    ]);
    expect(results[0]).toMatchObject({ isError: true, errorKind: 'transient' });
  });

  it("keeps run()'s outcome whatever the wrapper returns or throws after run()", async () => {
    const { tool, runs } = counted(({ n }) => n * 2);
    const wrappers: ExecutionWrapper[] = [
      async (_e, run) => {
        await run();
        return { isError: true, output: 'forged' };
      },
      async (_e, run) => {
        await run();
        throw new Error('span exporter down');
      },
      // Not awaited: the dispatcher still waits for the tool.
      async (_e, run) => {
        void run();
      },
      // Twice: the tool runs once, both calls share its outcome.
      async (_e, run) => {
        const [a, b] = await Promise.all([run(), run()]);
        expect(a).toBe(b);
      },
    ];
    for (const wrapExecution of wrappers) {
      const dispatcher = createDispatcher({ tools: [tool], wrapExecution, defaultDecision: 'allow' });
      const { results } = await dispatcher.dispatch([call('counted', { n: 4 })], { turnId: 't' });
      expect(results).toMatchObject([{ output: 8, isError: false }]);
    }
    expect(runs()).toBe(wrappers.length);
  });

  it('fails the call closed when the wrapper throws or returns before run(); the tool does not run', async () => {
    const { tool, runs } = counted(({ n }) => n);
    let late: (() => Promise<ExecutionOutcome>) | undefined;
    const cases: [ExecutionWrapper, string][] = [
      [
        () => {
          throw new Error('no tracer');
        },
        'failed before calling run() (no tracer)',
      ],
      [async () => 'nothing', 'returned without calling run()'],
      [
        async (_e, run) => {
          late = run;
        },
        'returned without calling run()',
      ],
    ];
    for (const [wrapExecution, why] of cases) {
      const dispatcher = createDispatcher({ tools: [tool], wrapExecution, defaultDecision: 'allow' });
      const { results } = await dispatcher.dispatch([call('counted', { n: 1 })], { turnId: 't' });
      expect(results).toMatchObject([
        {
          isError: true,
          errorKind: 'internal',
          output: `Call to 'counted' not run: the execution wrapper ${why}. The tool did not run; fix the wrapper (it must call run() once).`,
        },
      ]);
    }
    // run() called after the wrapper settled runs nothing.
    expect(await late?.()).toMatchObject({ isError: true, errorKind: 'internal', attempts: 0 });
    expect(runs()).toBe(0);
  });

  it('stops waiting for a wrapper that hangs before run() when the turn is cancelled', async () => {
    const { tool, runs } = counted(({ n }) => n);
    const controller = new AbortController();
    const dispatcher = createDispatcher({ tools: [tool], wrapExecution: () => new Promise(() => {}), defaultDecision: 'allow' });
    const pending = dispatcher.dispatch([call('counted', { n: 1 })], { turnId: 't', signal: controller.signal });
    setTimeout(() => controller.abort('stop'), 1);
    expect((await pending).results).toMatchObject([{ isError: true, errorKind: 'cancelled' }]);
    expect(runs()).toBe(0);
  });

  it('is refused when it is not a function', () => {
    expect(() => createDispatcher({ tools: [], wrapExecution: 'trace' as never })).toThrow(
      'createDispatcher: wrapExecution must be a function (execution, run) => Promise, calling run() once.',
    );
  });
});

describe('the registry', () => {
  it('answers has, get and list (sorted by name), and sorts the names an unknown-tool error lists', async () => {
    const dispatcher = createDispatcher({ tools: [shell, echo, add] });
    expect([dispatcher.has('echo'), dispatcher.has('ECHO'), dispatcher.has('__proto__'), dispatcher.has('toString')]).toEqual([
      true,
      false,
      false,
      false,
    ]);
    expect(dispatcher.get('shell')).toBe(shell);
    expect(dispatcher.get('constructor')).toBeUndefined();
    expect(dispatcher.list().map((t) => t.name)).toEqual(['add', 'echo', 'shell']);
    const { results } = await dispatcher.dispatch([call('nope', {})], { turnId: 't' });
    expect(results[0]?.output).toBe("Unknown tool 'nope'. Available tools: add, echo, shell.");
    expect(createDispatcher({ tools: [] }).list()).toEqual([]);
  });
});
