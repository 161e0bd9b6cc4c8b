// Stages 6–9 (budget, execute with timeout/abort/retry, after-hooks, shaping) and `execute`.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDispatcher, defineTool, type AfterHook } from '../src/index.js';
import { call, setup } from './fixtures.js';

const never = defineTool({
  name: 'never',
  description: 'Never finishes unless aborted.',
  input: z.object({}),
  timeoutMs: 5,
  execute: (_input, { signal }) =>
    new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted by signal')))),
});

const deaf = defineTool({
  name: 'deaf',
  description: 'Ignores its signal and never finishes.',
  input: z.object({}),
  execute: () => new Promise(() => {}),
});

function flaky(failures: number, retry: { attempts: number; retryOn?: (e: unknown) => boolean }) {
  let calls = 0;
  const tool = defineTool({
    name: 'flaky',
    description: 'Fails a few times.',
    input: z.object({}),
    retry: { backoffMs: 0, ...retry },
    execute: () => {
      calls++;
      if (calls <= failures) throw new Error(`failure ${calls}`);
      return `ok after ${calls}`;
    },
  });
  return { tool, calls: () => calls };
}

describe('stage 6: budget pre-check', () => {
  it('denies calls past budget.maxCalls, counting calls of the same batch, and names the limit', async () => {
    const { dispatcher, records, ctx } = setup({ budget: { maxCalls: 2 } });
    const { results } = await dispatcher.dispatch(
      [call('add', { a: 1, b: 1 }), call('echo', { text: 'x' }), call('add', { a: 2, b: 2 })],
      ctx,
    );
    expect(results.map((r) => r.output)).toEqual([
      2,
      'x',
      "Call to 'add' not run: the tool-call budget is used up (budget.maxCalls = 2). Answer with what you have.",
    ]);
    expect(records.map((r) => `${r.decision} ${r.source}`)).toEqual(['allow default', 'allow readonly', 'deny budget:maxCalls']);
    expect(dispatcher.budgetUsage()).toEqual({ total: 2, perTool: { add: 1, echo: 1 } });
  });

  it('denies calls past a per-tool limit, across batches, and restores counters from budgetUsage', async () => {
    const { dispatcher, ctx } = setup({ budget: { perTool: { add: 1 } } });
    await dispatcher.dispatch([call('add', { a: 1, b: 1 })], ctx);
    const { results } = await dispatcher.dispatch([call('add', { a: 1, b: 1 }), call('echo', { text: 'still fine' })], ctx);
    expect(results.map((r) => r.output)).toEqual([
      "Call to 'add' not run: this tool's budget is used up (budget.perTool.add = 1). Use another tool or answer with what you have.",
      'still fine',
    ]);
    const resumed = setup({ budget: { perTool: { add: 1 } }, budgetUsage: dispatcher.budgetUsage() });
    const again = await resumed.dispatcher.dispatch([call('add', { a: 1, b: 1 })], ctx);
    expect(again.results[0]?.isError).toBe(true);
  });
});

describe('stage 7: execute', () => {
  it('turns a thrown error into "Error calling tool"', async () => {
    const thrower = defineTool({
      name: 'thrower',
      description: 'Throws.',
      input: z.object({}),
      execute: () => {
        throw new Error('disk full');
      },
    });
    const { dispatcher, ctx } = setup({ tools: [thrower] });
    const { results } = await dispatcher.dispatch([call('thrower', {})], ctx);
    expect(results[0]).toMatchObject({ isError: true, output: "Error calling tool 'thrower': Error: disk full" });
  });

  it('times out a tool that listens to its signal, and one that ignores it', async () => {
    const { dispatcher, ctx } = setup({ tools: [never, deaf], defaultTimeoutMs: 5 });
    const { results } = await dispatcher.dispatch([call('never', {}), call('deaf', {})], ctx);
    expect(results.map((r) => [r.output, r.isError])).toEqual([
      ["Tool 'never' timed out after 5 ms.", true],
      ["Tool 'deaf' timed out after 5 ms.", true],
    ]);
  });

  it('cancels running calls on abort and does not start the rest', async () => {
    const controller = new AbortController();
    const started: string[] = [];
    const blocker = defineTool({
      name: 'blocker',
      description: 'Waits for abort.',
      input: z.object({ id: z.string() }),
      execute: ({ id }, { signal }) => {
        started.push(id);
        if (started.length === 1) queueMicrotask(() => controller.abort());
        return new Promise((_r, reject) => signal.addEventListener('abort', () => reject(new Error('stopped'))));
      },
    });
    const { dispatcher } = setup({ tools: [blocker], concurrency: 1 });
    const { results } = await dispatcher.dispatch([call('blocker', { id: 'a' }), call('blocker', { id: 'b' })], {
      turnId: 't',
      signal: controller.signal,
    });
    expect(started).toEqual(['a']);
    expect(results.map((r) => r.output)).toEqual([
      "cancelled: 'blocker' was stopped because the turn was cancelled.",
      "cancelled: the turn was cancelled before 'blocker' ran.",
    ]);
    expect(results.every((r) => r.isError)).toBe(true);
  });

  it('with an already-aborted signal, every call is cancelled and none runs', async () => {
    const { dispatcher, records } = setup();
    const { results } = await dispatcher.dispatch([call('add', { a: 1, b: 1 })], { turnId: 't', signal: AbortSignal.abort() });
    expect(results[0]?.output).toBe("cancelled: the turn was cancelled before 'add' ran.");
    expect(records).toHaveLength(1);
  });

  it('retries only errors that retryOn accepts', async () => {
    const accepted = flaky(2, { attempts: 3, retryOn: () => true });
    const a = setup({ tools: [accepted.tool] });
    expect((await a.dispatcher.dispatch([call('flaky', {})], a.ctx)).results[0]?.output).toBe('ok after 3');
    expect(accepted.calls()).toBe(3);

    const rejected = flaky(2, { attempts: 3, retryOn: (e) => (e as Error).message === 'nope' });
    const b = setup({ tools: [rejected.tool] });
    expect((await b.dispatcher.dispatch([call('flaky', {})], b.ctx)).results[0]?.output).toBe(
      "Error calling tool 'flaky': Error: failure 1",
    );
    expect(rejected.calls()).toBe(1);
  });

  it('does not retry by default, nor when retryOn throws, and gives up after `attempts`', async () => {
    const byDefault = flaky(1, { attempts: 5 });
    const a = setup({ tools: [byDefault.tool] });
    await a.dispatcher.dispatch([call('flaky', {})], a.ctx);
    expect(byDefault.calls()).toBe(1);

    const throwing = flaky(1, {
      attempts: 5,
      retryOn: () => {
        throw new Error('bad retryOn');
      },
    });
    const b = setup({ tools: [throwing.tool] });
    await b.dispatcher.dispatch([call('flaky', {})], b.ctx);
    expect(throwing.calls()).toBe(1);

    const exhausted = flaky(10, { attempts: 2, retryOn: () => true });
    const c = setup({ tools: [exhausted.tool] });
    expect((await c.dispatcher.dispatch([call('flaky', {})], c.ctx)).results[0]?.output).toBe(
      "Error calling tool 'flaky' (2 tries): Error: failure 2",
    );
    expect(exhausted.calls()).toBe(2);
  });

  // A tool that fails at once, retried without backoff: each try must give timers a turn, or the
  // cancel and the timeout below never fire. The tool gives up by itself after GIVE_UP tries, so a
  // dispatcher that starves the timers ends with 'gave up' instead of hanging the test.
  const GIVE_UP = 200_000;
  function stubborn(how: 'sync' | 'async', timeoutMs: number) {
    let tries = 0;
    const tool = defineTool({
      name: 'stubborn',
      description: 'Fails at once, every time.',
      input: z.object({}),
      timeoutMs,
      retry: { attempts: 1e9, backoffMs: 0, retryOn: () => true },
      execute: () => {
        if (++tries >= GIVE_UP) return 'gave up';
        if (how === 'sync') throw new Error('still failing');
        return Promise.reject(new Error('still failing'));
      },
    });
    return { tool, tries: () => tries };
  }

  it.each(['sync', 'async'] as const)('a turn cancel ends a call retried without backoff (tool failing %s)', async (how) => {
    const s = stubborn(how, 2_000_000_000);
    const { dispatcher } = setup({ tools: [s.tool] });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const { results } = await dispatcher.dispatch([call('stubborn', {})], { turnId: 't', signal: controller.signal });
    expect(results[0]).toMatchObject({
      isError: true,
      output: "cancelled: 'stubborn' was stopped because the turn was cancelled.",
    });
    expect(s.tries()).toBeGreaterThan(1);
    expect(s.tries()).toBeLessThan(GIVE_UP);
  });

  it.each(['sync', 'async'] as const)('the timeout is one deadline over every try (tool failing %s)', async (how) => {
    const s = stubborn(how, 50);
    const { dispatcher, ctx } = setup({ tools: [s.tool] });
    const { results } = await dispatcher.dispatch([call('stubborn', {})], ctx);
    expect(results[0]).toMatchObject({ isError: true, errorKind: 'timeout' });
    expect(results[0]?.output).toMatch(/^Tool 'stubborn' timed out after 50 ms \(\d+ tries\)\.$/);
    expect(s.tries()).toBeGreaterThan(1);
    expect(s.tries()).toBeLessThan(GIVE_UP);
  });

  it('a backoff longer than the time left ends the call at once with its last error, without waiting', async () => {
    let tries = 0;
    const patient = defineTool({
      name: 'patient',
      description: 'Fails, and would wait two minutes before its retry.',
      input: z.object({}),
      timeoutMs: 20,
      retry: { attempts: 5, backoffMs: 120_000, retryOn: () => true },
      execute: () => {
        tries++;
        throw new Error('busy');
      },
    });
    const { dispatcher, ctx } = setup({ tools: [patient] });
    const { results } = await dispatcher.dispatch([call('patient', {})], ctx);
    expect(results[0]).toMatchObject({
      isError: true,
      errorKind: 'tool_error',
      output:
        "Error calling tool 'patient': Error: busy (not tried again: the next try would start after the call's 20 ms timeout)",
    });
    expect(tries).toBe(1);
  });

  it("sets modelOverride from the tool's model option", async () => {
    const deep = defineTool({
      name: 'think',
      description: 'Hard thinking.',
      input: z.object({}),
      model: 'big-model',
      execute: () => 'ok',
    });
    const { dispatcher, ctx } = setup({ tools: [deep] });
    const { results } = await dispatcher.dispatch([call('think', {})], ctx);
    expect(results[0]).toMatchObject({ output: 'ok', modelOverride: 'big-model' });
  });

  it('gives the tool its call id, turn id and a signal', async () => {
    const seen: unknown[] = [];
    const who = defineTool({
      name: 'who',
      description: 'Context.',
      input: z.object({}),
      execute: (_i, ctx) => seen.push([ctx.callId, ctx.turnId, ctx.signal instanceof AbortSignal]),
    });
    const { dispatcher } = setup({ tools: [who] });
    const c = call('who', {});
    await dispatcher.dispatch([c], { turnId: 'turn-9' });
    expect(seen).toEqual([[c.id, 'turn-9', true]]);
  });
});

describe('stage 8: budget record and after-hooks', () => {
  it('after-hooks run in order and may transform the result or stop the turn', async () => {
    const upper: AfterHook = { name: 'upper', run: (r) => ({ output: String(r.output).toUpperCase() }) };
    const stopper: AfterHook = {
      name: 'stopper',
      run: (r) => (r.output === 'STOP' ? { stop: { reason: 'user said stop' } } : undefined),
    };
    const { dispatcher, ctx } = setup({ hooks: { after: [upper, stopper] } });
    const { results } = await dispatcher.dispatch([call('echo', { text: 'stop' }), call('echo', { text: 'go' })], ctx);
    expect(results.map((r) => [r.output, r.stop])).toEqual([
      ['STOP', { reason: 'user said stop' }],
      ['GO', undefined],
    ]);
  });

  it('an after-hook that throws or answers garbage withholds the output (fail closed), and the call still counts', async () => {
    const redact: AfterHook = {
      name: 'redact',
      run: () => {
        throw new Error('redactor offline');
      },
    };
    const odd = { name: 'odd', run: () => 42 } as unknown as AfterHook;
    const a = setup({ hooks: { after: [redact] } });
    const { results } = await a.dispatcher.dispatch([call('echo', { text: 'secret' })], a.ctx);
    expect(results[0]).toMatchObject({
      isError: true,
      output:
        "The result of 'echo' was withheld: after-hook 'redact' failed (redactor offline). The tool did run; do not assume it failed or succeeded.",
    });
    expect(JSON.stringify(results)).not.toContain('secret');
    expect(a.dispatcher.budgetUsage().total).toBe(1);
    const b = setup({ hooks: { after: [odd] } });
    const again = await b.dispatcher.dispatch([call('echo', { text: 'secret' })], b.ctx);
    expect(again.results[0]?.output).toContain("after-hook 'odd' returned an unrecognised value");
  });
});

describe('stage 9: shape', () => {
  const returning = (value: () => unknown) =>
    defineTool({ name: 'ret', description: 'Returns a value.', input: z.object({}), execute: value });

  it('refuses outputs that are not JSON, naming where', async () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic['self'] = cyclic;
    const cases: [unknown, string][] = [
      [cyclic, 'a cycle at $.self'],
      [{ f: () => 1 }, 'a function at $.f'],
      [{ n: [1, 2n] }, 'a BigInt at $.n[1]'],
      [{ x: Number.NaN }, 'the number NaN at $.x'],
      [new Map(), 'a Map at $'],
    ];
    for (const [value, problem] of cases) {
      const { dispatcher, ctx } = setup({ tools: [returning(() => value)] });
      const { results } = await dispatcher.dispatch([call('ret', {})], ctx);
      expect(results[0]).toMatchObject({
        isError: true,
        output: `Tool 'ret' returned a value that is not JSON (${problem}). The tool ran, but its output cannot be shown.`,
      });
    }
  });

  it('turns undefined into null and Dates into strings', async () => {
    const a = setup({ tools: [returning(() => undefined)] });
    expect((await a.dispatcher.dispatch([call('ret', {})], a.ctx)).results[0]).toMatchObject({ output: null, isError: false });
    const b = setup({ tools: [returning(() => ({ at: new Date(0), gone: undefined }))] });
    expect((await b.dispatcher.dispatch([call('ret', {})], b.ctx)).results[0]?.output).toEqual({
      at: '1970-01-01T00:00:00.000Z',
    });
  });

  it('cuts long strings and long objects at maxOutputChars with a marker', async () => {
    const a = setup({ tools: [returning(() => 'x'.repeat(25))], maxOutputChars: 10 });
    expect((await a.dispatcher.dispatch([call('ret', {})], a.ctx)).results[0]?.output).toBe('xxxxxxxxxx…[truncated 15 chars]');
    const b = setup({ tools: [returning(() => ({ list: [1, 2, 3, 4, 5, 6] }))], maxOutputChars: 10 });
    expect((await b.dispatcher.dispatch([call('ret', {})], b.ctx)).results[0]?.output).toBe('{"list":[1…[truncated 12 chars]');
  });
});

describe('execute', () => {
  it('runs a verdict from classify without classifying again', async () => {
    let policyCalls = 0;
    const { dispatcher, records, ctx } = setup({ policy: () => void policyCalls++ });
    const verdict = await dispatcher.classify(call('add', { a: 2, b: 3 }), ctx);
    expect(policyCalls).toBe(1);
    const result = await dispatcher.execute(verdict, ctx);
    expect(result.output).toBe(5);
    expect(policyCalls).toBe(1);
    expect(records).toEqual([]);
  });

  it('validates the input of a hand-made (approved) verdict before running it', async () => {
    const { dispatcher, ctx } = setup();
    const good = await dispatcher.execute({ kind: 'execute', call: call('add', { a: 1, b: 1 }), input: { a: 1, b: 1 } }, ctx);
    const bad = await dispatcher.execute({ kind: 'execute', call: call('add', { a: 'x' }), input: { a: 'x' } }, ctx);
    expect(good.output).toBe(2);
    expect(bad.output).toMatch(/^Invalid input for 'add':/);
  });

  it('returns a deny verdict as is and never runs a call still waiting for approval', async () => {
    const { dispatcher, ctx } = setup({ permissions: { ask: ['add'] } });
    const parked = await dispatcher.classify(call('add', { a: 1, b: 1 }), ctx);
    expect((await dispatcher.execute(parked, ctx)).output).toBe(
      "Call to 'add' not run: it is waiting for approval (matches ask rule 'add').",
    );
    const denied = await dispatcher.classify(call('nope', {}), ctx);
    expect(denied.kind).toBe('deny');
    if (denied.kind === 'deny') expect(await dispatcher.execute(denied, ctx)).toBe(denied.result);
  });
});

describe('a tool that finished is kept when the turn is cancelled meanwhile', () => {
  it('a plain return value survives an abort during execute; an unfinished async tool is cancelled', async () => {
    const controller = new AbortController();
    const sent = defineTool({
      name: 'send',
      description: 'sends, then the user presses stop',
      input: z.object({}),
      execute: () => {
        controller.abort('stop');
        return 'sent';
      },
    });
    const pending = defineTool({
      name: 'wait',
      description: 'never ends',
      input: z.object({}),
      execute: () => new Promise(() => undefined),
    });
    const dispatcher = createDispatcher({ tools: [sent, pending], defaultDecision: 'allow' });
    const { results } = await dispatcher.dispatch(
      [
        { id: 'a', name: 'send', input: {} },
        { id: 'b', name: 'wait', input: {} },
      ],
      { turnId: 't', signal: controller.signal },
    );
    expect(results[0]).toEqual({ callId: 'a', name: 'send', output: 'sent', isError: false });
    expect(results[1]).toMatchObject({ callId: 'b', isError: true });
    expect(String(results[1]?.output)).toMatch(/^cancelled/);
  });
});
