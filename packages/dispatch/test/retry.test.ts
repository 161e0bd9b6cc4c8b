// The retry policy by error kind, with the waits themselves checked on fake timers.
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createDispatcher, defineTool, ToolError, type DispatcherOptions } from '../src/index.js';
import type { ExecutionOutcome, RetryPolicy } from '../src/internal.js';
import { call } from './fixtures.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A tool that throws `failures[i]` on try i + 1 (a function: it hangs), then answers 'ok'. */
function failing(
  failures: readonly (Error | 'hang')[],
  extra: { retryPolicy?: RetryPolicy; timeoutMs?: number; name?: string } = {},
) {
  let tries = 0;
  const tool = defineTool({
    name: extra.name ?? 'fetch',
    description: 'Fetches, failing first.',
    input: z.object({}),
    ...extra,
    execute: () => {
      const failure = failures[tries++];
      if (failure === 'hang') return new Promise(() => {});
      if (failure !== undefined) throw failure;
      return 'ok';
    },
  });
  return { tool, tries: () => tries };
}

/** Dispatches one call of each tool and exposes the pending results and the wrapper's outcomes. */
function start(options: DispatcherOptions, signal?: AbortSignal) {
  const outcomes: ExecutionOutcome[] = [];
  const dispatcher = createDispatcher({
    defaultDecision: 'allow',
    ...options,
    wrapExecution: async (_e, run) => outcomes.push(await run()),
  });
  const calls = options.tools.map((t) => call(t.name, {}));
  let settled = false;
  const pending = dispatcher.dispatch(calls, { turnId: 't', ...(signal === undefined ? {} : { signal }) }).then((outcome) => {
    settled = true;
    return outcome.results;
  });
  return { pending, outcomes, settled: () => settled };
}

const transient = (message = 'connection reset') => new ToolError(message, { kind: 'transient' });

describe('the default retry policy', () => {
  it('retries a transient error after 200 ms, then 400 ms, three tries in all', async () => {
    const { tool, tries } = failing([transient(), transient(), transient()]);
    const run = start({ tools: [tool] });
    await vi.advanceTimersByTimeAsync(0);
    expect(tries()).toBe(1);
    await vi.advanceTimersByTimeAsync(199);
    expect(tries()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(tries()).toBe(2);
    await vi.advanceTimersByTimeAsync(399);
    expect(tries()).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(tries()).toBe(3);
    expect(await run.pending).toMatchObject([
      {
        isError: true,
        errorKind: 'transient',
        output: "Error calling tool 'fetch' (3 tries): ToolError (transient): connection reset",
      },
    ]);
    expect(run.outcomes).toMatchObject([{ attempts: 3, durationMs: 600, errorKind: 'transient' }]);
  });

  it('answers with the success of a later try', async () => {
    const { tool, tries } = failing([transient()]);
    const run = start({ tools: [tool] });
    await vi.advanceTimersByTimeAsync(200);
    expect(await run.pending).toMatchObject([{ isError: false, output: 'ok' }]);
    expect(tries()).toBe(2);
    expect(run.outcomes).toMatchObject([{ attempts: 2 }]);
  });

  it("waits a rate limit's retryAfterMs rather than the backoff", async () => {
    const limited = new ToolError('slow down', { kind: 'rate_limited', retryAfterMs: 5000 });
    const { tool, tries } = failing([limited]);
    const run = start({ tools: [tool] });
    await vi.advanceTimersByTimeAsync(4999);
    expect(tries()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await run.pending).toMatchObject([{ output: 'ok' }]);
    expect(tries()).toBe(2);
  });

  it('never retries permission errors, plain errors or timeouts', async () => {
    const denied = failing([new ToolError('403 Forbidden', { kind: 'permission' })], { name: 'read' });
    const plain = failing([new Error('bad request')], { name: 'parse' });
    const slow = failing(['hang'], { name: 'slow', timeoutMs: 1000 });
    const run = start({ tools: [denied.tool, plain.tool, slow.tool] });
    await vi.advanceTimersByTimeAsync(1000);
    expect(await run.pending).toMatchObject([
      { errorKind: 'permission', output: "Error calling tool 'read': ToolError (permission): 403 Forbidden" },
      { errorKind: 'tool_error', output: "Error calling tool 'parse': Error: bad request" },
      { errorKind: 'timeout', output: "Tool 'slow' timed out after 1000 ms." },
    ]);
    expect([denied.tries(), plain.tries(), slow.tries()]).toEqual([1, 1, 1]);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('retry policies of the dispatcher and of a tool', () => {
  it("a tool's policy wins over the dispatcher's, which wins over the default", async () => {
    const retryPolicy: RetryPolicy = { transient: { attempts: 2, backoffMs: 50 }, tool_error: { attempts: 2, backoffMs: 10 } };
    const own = failing([transient(), transient()], { name: 'own', retryPolicy: { transient: false } });
    const shared = failing([transient(), transient()], { name: 'shared' });
    const plain = failing([new Error('flaky')], { name: 'plain' });
    const run = start({ tools: [own.tool, shared.tool, plain.tool], retryPolicy });
    await vi.advanceTimersByTimeAsync(10);
    expect([own.tries(), shared.tries(), plain.tries()]).toEqual([1, 1, 2]);
    await vi.advanceTimersByTimeAsync(40);
    expect(await run.pending).toMatchObject([
      { errorKind: 'transient', output: "Error calling tool 'own': ToolError (transient): connection reset" },
      { errorKind: 'transient', output: "Error calling tool 'shared' (2 tries): ToolError (transient): connection reset" },
      { isError: false, output: 'ok' },
    ]);
  });

  it('caps each wait at maxBackoffMs', async () => {
    const { tool, tries } = failing([transient(), transient(), transient()], {
      retryPolicy: { transient: { attempts: 4, backoffMs: 1000, maxBackoffMs: 1500 } },
    });
    const run = start({ tools: [tool] });
    for (const [ms, expected] of [
      [999, 1],
      [1, 2],
      [1499, 2],
      [1, 3],
      [1499, 3],
      [1, 4],
    ] as const) {
      await vi.advanceTimersByTimeAsync(ms);
      expect(tries()).toBe(expected);
    }
    expect(await run.pending).toMatchObject([{ output: 'ok' }]);
  });

  it('retries a timeout only for a tool that opts in, giving each try the whole timeoutMs', async () => {
    const { tool, tries } = failing(['hang', 'hang'], {
      timeoutMs: 1000,
      retryPolicy: { timeout: { attempts: 3, backoffMs: 100 } },
    });
    const run = start({ tools: [tool] });
    await vi.advanceTimersByTimeAsync(1000);
    expect(tries()).toBe(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(tries()).toBe(2);
    await vi.advanceTimersByTimeAsync(999);
    expect(run.settled()).toBe(false);
    await vi.advanceTimersByTimeAsync(1 + 200);
    expect(await run.pending).toMatchObject([{ isError: false, output: 'ok' }]);
    expect(run.outcomes).toMatchObject([{ attempts: 3, durationMs: 2300 }]);
  });

  it('does not wait past the deadline: a retry-after beyond the timeout ends the call at once', async () => {
    const limited = new ToolError('slow down', { kind: 'rate_limited', retryAfterMs: 60_000 });
    const { tool, tries } = failing([limited], { timeoutMs: 1000 });
    const run = start({ tools: [tool] });
    await vi.advanceTimersByTimeAsync(0);
    expect(await run.pending).toMatchObject([
      {
        errorKind: 'rate_limited',
        output:
          "Error calling tool 'fetch': ToolError (rate_limited): slow down (not tried again: the next try would start after the call's 1000 ms timeout)",
      },
    ]);
    expect(tries()).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a cancel during the backoff wait ends the call at once, clearing the wait', async () => {
    const { tool, tries } = failing([transient(), transient()]);
    const controller = new AbortController();
    const run = start({ tools: [tool] }, controller.signal);
    await vi.advanceTimersByTimeAsync(100);
    expect(vi.getTimerCount()).toBe(1);
    controller.abort('user pressed stop');
    await vi.advanceTimersByTimeAsync(0);
    expect(run.settled()).toBe(true);
    expect(await run.pending).toMatchObject([
      { errorKind: 'cancelled', output: "cancelled: 'fetch' was stopped because the turn was cancelled." },
    ]);
    expect(tries()).toBe(1);
    expect(run.outcomes).toMatchObject([{ attempts: 1, durationMs: 100, errorKind: 'cancelled' }]);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('checking retry policies', () => {
  const base = { name: 't', description: 'd', input: z.object({}), execute: () => 1 };

  it('refuses what cannot be retried, naming the entry', () => {
    expect(() => createDispatcher({ tools: [], retryPolicy: { permission: { attempts: 2, backoffMs: 0 } } as never })).toThrow(
      'createDispatcher: retryPolicy.permission cannot be retried: a missing permission does not come back by trying again.',
    );
    expect(() => createDispatcher({ tools: [], retryPolicy: { timeout: { attempts: 2, backoffMs: 0 } } })).toThrow(
      'createDispatcher: retryPolicy.timeout can be set on a tool only: a timeout is retried only for a tool that opts in.',
    );
    expect(() => createDispatcher({ tools: [], retryPolicy: { denied: false } as never })).toThrow(
      'createDispatcher: retryPolicy.denied is not a kind a policy retries (those are transient, rate_limited, timeout, tool_error).',
    );
    expect(() => createDispatcher({ tools: [], retryPolicy: [] as never })).toThrow(
      'createDispatcher: retryPolicy must be an object by error kind',
    );
  });

  it('refuses malformed entries on a tool', () => {
    const bad: [unknown, string][] = [
      [
        { transient: { attempts: 0, backoffMs: 1 } },
        'retryPolicy.transient.attempts must be a whole number >= 1 (total tries), got 0.',
      ],
      [
        { transient: { attempts: 2, backoffMs: -1 } },
        'retryPolicy.transient.backoffMs must be a number of milliseconds >= 0, got -1.',
      ],
      [
        { rate_limited: { attempts: 2, backoffMs: 1, maxBackoffMs: Number.NaN } },
        'retryPolicy.rate_limited.maxBackoffMs must be',
      ],
      [{ transient: { attempts: 2, backoffMs: 1, jitter: true } }, "retryPolicy.transient has an unknown key 'jitter'"],
      [{ transient: 3 }, 'retryPolicy.transient must be { attempts, backoffMs, maxBackoffMs? } or false.'],
    ];
    for (const [retryPolicy, message] of bad) {
      expect(() => defineTool({ ...base, retryPolicy: retryPolicy as RetryPolicy })).toThrow(`Tool 't': ${message}`);
    }
    expect(
      defineTool({ ...base, retryPolicy: { timeout: { attempts: 2, backoffMs: 0 }, transient: false } }).retryPolicy,
    ).toEqual({
      timeout: { attempts: 2, backoffMs: 0 },
      transient: false,
    });
  });
});

describe('the retry policy as a model', () => {
  type Failure = 'transient' | 'rate_limited' | 'permission' | 'tool_error';

  /** What the policy below says should happen: the tries made and how the call ends. */
  function expected(failures: readonly Failure[], attempts: number): { tries: number; outcome: Failure | 'ok' } {
    for (let attempt = 1; ; attempt++) {
      const failure = failures[attempt - 1];
      if (failure === undefined) return { tries: attempt, outcome: 'ok' };
      const retried = (failure === 'transient' || failure === 'rate_limited') && attempt < attempts;
      if (!retried) return { tries: attempt, outcome: failure };
    }
  }

  it('makes exactly the tries the policy allows, for any sequence of failures (numRuns 150)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<Failure>('transient', 'rate_limited', 'permission', 'tool_error'), { maxLength: 6 }),
        fc.integer({ min: 1, max: 5 }),
        async (failures, attempts) => {
          const errors = failures.map((kind) => new ToolError(`failed: ${kind}`, { kind }));
          const { tool, tries } = failing(errors);
          const policy = { attempts, backoffMs: 10 };
          const run = start({ tools: [tool], retryPolicy: { transient: policy, rate_limited: policy } });
          await vi.advanceTimersByTimeAsync(10 * 2 ** 6);
          const [result] = await run.pending;
          const want = expected(failures, attempts);
          expect(tries()).toBe(want.tries);
          expect(result?.isError ? result.errorKind : 'ok').toBe(want.outcome);
          expect(run.outcomes[0]?.attempts).toBe(want.tries);
        },
      ),
      { numRuns: 150 },
    );
  });
});
