// Stage 7 on its own: one deadline over every try, retries, cancellation.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type RetryOptions } from '../../src/define.js';
import { runOnce, runTool } from '../../src/stages/execute.js';

const call = { id: 'c1', name: 'flaky', input: {} };
const turn = () => {
  const cancel = new AbortController();
  return { turnId: 't1', cancel, signal: cancel.signal };
};
const tool = (execute: (input: unknown, ctx: { signal: AbortSignal }) => unknown, retry?: RetryOptions, timeoutMs?: number) =>
  defineTool({
    name: 'flaky',
    description: 'Flaky.',
    input: z.object({}),
    execute,
    ...(retry === undefined ? {} : { retry }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });

describe('runOnce', () => {
  it('settles a plain value, and a synchronous throw', async () => {
    expect(
      await runOnce(
        tool(() => 42),
        call,
        {},
        turn(),
        1000,
        performance.now() + 1000,
      ),
    ).toEqual({ kind: 'ok', value: 42 });
    expect(
      await runOnce(
        tool(() => {
          throw new Error('x');
        }),
        call,
        {},
        turn(),
        1000,
        performance.now() + 1000,
      ),
    ).toMatchObject({ kind: 'error' });
  });

  it('does not start the tool when the turn is already cancelled', async () => {
    let ran = false;
    const t = turn();
    t.cancel.abort('stop');
    expect(
      await runOnce(
        tool(() => (ran = true)),
        call,
        {},
        t,
        1000,
        performance.now() + 1000,
      ),
    ).toEqual({ kind: 'cancelled' });
    expect(ran).toBe(false);
  });
});

describe('runTool', () => {
  const options = { defaultTimeoutMs: 1000, retryPolicy: {} };
  it('retries what retryOn accepts, counting every try', async () => {
    let tries = 0;
    const flaky = tool(
      () => {
        if (++tries < 3) throw new TypeError('again');
        return 'done';
      },
      { attempts: 3, backoffMs: 0, retryOn: (e) => e instanceof TypeError },
    );
    expect(await runTool(flaky, call, {}, turn(), options)).toEqual({
      result: { callId: 'c1', name: 'flaky', output: 'done', isError: false },
      attempts: 3,
    });
    expect(tries).toBe(3);
  });

  it('does not retry what retryOn refuses, or when retryOn throws', async () => {
    for (const retryOn of [
      () => false,
      () => {
        throw new Error('x');
      },
    ]) {
      let tries = 0;
      const failing = tool(
        () => {
          tries++;
          throw new Error('no');
        },
        { attempts: 5, backoffMs: 0, retryOn },
      );
      expect(await runTool(failing, call, {}, turn(), options)).toEqual({
        result: {
          callId: 'c1',
          name: 'flaky',
          output: "Error calling tool 'flaky': Error: no",
          isError: true,
          errorKind: 'tool_error',
        },
        attempts: 1,
      });
      expect(tries).toBe(1);
    }
  });

  it('times out a tool that never settles, aborting its signal', async () => {
    let signal: AbortSignal | undefined;
    const hangs = tool(
      (_, ctx) => {
        signal = ctx.signal;
        return new Promise(() => {});
      },
      undefined,
      5,
    );
    expect(await runTool(hangs, call, {}, turn(), options)).toMatchObject({
      result: { output: "Tool 'flaky' timed out after 5 ms.", isError: true, errorKind: 'timeout' },
      attempts: 1,
    });
    expect(signal?.aborted).toBe(true);
  });

  it("gives a tool that first reads its signal late the one signal, aborted with the call's reason", async () => {
    let lateCtx: { signal: AbortSignal } | undefined;
    const late = tool(
      (_, ctx) => {
        lateCtx = ctx;
        return new Promise(() => {});
      },
      undefined,
      5,
    );
    await runTool(late, call, {}, turn(), options);
    // Read for the first time after the timeout: aborted with the TimeoutError, the same object on each read.
    const signal = lateCtx?.signal;
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toMatchObject({ name: 'TimeoutError' });
    expect(lateCtx?.signal).toBe(signal);

    const t = turn();
    let cancelledCtx: { signal: AbortSignal } | undefined;
    const pending = runTool(
      tool((_, ctx) => {
        cancelledCtx = ctx;
        return new Promise(() => {});
      }),
      call,
      {},
      t,
      options,
    );
    t.cancel.abort('stop');
    await pending;
    expect(cancelledCtx?.signal.aborted).toBe(true);
    expect(cancelledCtx?.signal.reason).toBe('stop');
  });

  it('reports a call cut off by the turn, and one never started', async () => {
    const t = turn();
    const pending = runTool(
      tool(() => new Promise(() => {})),
      call,
      {},
      t,
      options,
    );
    t.cancel.abort('stop');
    expect(await pending).toMatchObject({
      result: { output: "cancelled: 'flaky' was stopped because the turn was cancelled.", errorKind: 'cancelled' },
      attempts: 1,
    });
    expect(
      await runTool(
        tool(() => 1),
        call,
        {},
        t,
        options,
      ),
    ).toMatchObject({
      result: { output: "cancelled: the turn was cancelled before 'flaky' ran.", errorKind: 'cancelled' },
      attempts: 0,
    });
  });
});
