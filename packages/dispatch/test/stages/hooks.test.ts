// Stage 4 and the after-hooks of stage 8 on their own.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/define.js';
import { callInfo, runAfterHooks, runBeforeHooks } from '../../src/stages/hooks.js';
import type { AfterHook, BeforeHook, RawResult } from '../../src/types.js';

const shell = defineTool({ name: 'shell', description: 'Runs.', input: z.object({ cmd: z.string() }), execute: () => 'ran' });
const call = { id: 'c1', name: 'shell', input: { cmd: 'ls' } };
const subject = { call, tool: shell, input: { cmd: 'ls' } };
const turn = () => {
  const cancel = new AbortController();
  return { turnId: 't1', cancel, signal: cancel.signal, context: {}, transcript: () => [] };
};
const before = (name: string, run: BeforeHook['run']): BeforeHook => ({ name, run });

describe('runBeforeHooks', () => {
  it('passes each hook the input the previous one left, validating rewrites', async () => {
    const seen: unknown[] = [];
    const hooks = [
      before('a', () => ({ kind: 'rewrite', input: { cmd: 'ls -la' } })),
      before('b', ({ input }) => void seen.push(input)),
    ];
    expect(await runBeforeHooks(hooks, subject, turn())).toMatchObject({ kind: 'ok', input: { cmd: 'ls -la' } });
    expect(seen).toEqual([{ cmd: 'ls -la' }]);
    const invalid = await runBeforeHooks([before('a', () => ({ kind: 'rewrite', input: { cmd: 1 } }))], subject, turn());
    expect(invalid).toMatchObject({ kind: 'deny', source: 'hook:a' });
  });

  it('denies with the hook name when a hook throws or answers garbage', async () => {
    const threw = await runBeforeHooks(
      [
        before('h', () => {
          throw new Error('boom');
        }),
      ],
      subject,
      turn(),
    );
    expect(threw).toMatchObject({
      source: 'hook:h',
      result: { output: "Call to 'shell' denied: before-hook 'h' failed (boom). Do not retry it unchanged." },
    });
    const garbage = await runBeforeHooks([before('h', () => 42 as never)], subject, turn());
    expect(garbage).toMatchObject({
      source: 'hook:h',
      result: { output: "Call to 'shell' denied: before-hook 'h' returned an unrecognised value. Do not retry it unchanged." },
    });
  });

  it('gives a halting hook its own output, unshaped (stage 9 shapes it once)', async () => {
    const halted = await runBeforeHooks(
      [before('cache', () => ({ kind: 'halt', output: { cached: true }, isError: false }))],
      subject,
      turn(),
    );
    expect(halted).toEqual({
      kind: 'deny',
      source: 'hook:cache',
      result: { callId: 'c1', name: 'shell', output: { cached: true }, isError: false },
    });
  });

  it('runs no hook once the turn is cancelled, and abandons one cut off by the cancel', async () => {
    const t = turn();
    let ran = 0;
    const pending = runBeforeHooks([before('slow', () => new Promise(() => {})), before('next', () => void ran++)], subject, t);
    t.cancel.abort('stop');
    expect(await pending).toMatchObject({
      source: 'cancelled',
      result: { output: "cancelled: the turn was cancelled before 'shell' ran." },
    });
    expect(ran).toBe(0);
  });
});

describe('runAfterHooks', () => {
  const result: RawResult = { callId: 'c1', name: 'shell', output: 'secret', isError: false };
  const after = (name: string, run: AfterHook['run']): AfterHook => ({ name, run });

  it('applies the fields each hook returns, in order', async () => {
    const t = turn();
    const hooks = [
      after('redact', () => ({ output: '[redacted]' })),
      after('stop', (r) => ({ stop: { reason: `saw ${String(r.output)}` } })),
    ];
    expect(await runAfterHooks(hooks, result, callInfo(subject, t), t.signal)).toEqual({
      ...result,
      output: '[redacted]',
      stop: { reason: 'saw [redacted]' },
    });
  });

  it('withholds the output when a hook throws, answers garbage (null included) or is cut off by the cancel', async () => {
    const t = turn();
    const withheld = (why: string) =>
      `The result of 'shell' was withheld: after-hook 'h' ${why}. The tool did run; do not assume it failed or succeeded.`;
    expect(
      (
        await runAfterHooks(
          [
            after('h', () => {
              throw new Error('x');
            }),
          ],
          result,
          callInfo(subject, t),
          t.signal,
        )
      ).output,
    ).toBe(withheld('failed (x)'));
    for (const bad of [null, 5, { isError: 'yes' }, { stop: null }, { stop: { reason: 1 } }]) {
      const out = await runAfterHooks([after('h', () => bad as never)], result, callInfo(subject, t), t.signal);
      expect(out).toEqual({
        ...result,
        output: withheld('returned an unrecognised value'),
        isError: true,
        errorKind: 'withheld',
      });
    }
    t.cancel.abort('stop');
    expect((await runAfterHooks([after('h', () => undefined)], result, callInfo(subject, t), t.signal)).output).toBe(
      withheld('did not finish because the turn was cancelled'),
    );
  });

  it('makes the AbortSignal of callInfo only when it is read', () => {
    const t = turn();
    const info = callInfo(subject, t);
    expect(info).toMatchObject({ call, input: subject.input, turnId: 't1' });
    expect(info.signal.aborted).toBe(false);
  });
});
