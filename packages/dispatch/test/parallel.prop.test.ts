// Parallel execution under every interleaving fast-check's scheduler tries: at most
// `concurrency` tools run at once, results stay in call order, and a timeout, failure or abort
// in one call never loses another call's result.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDispatcher, defineTool } from '../src/index.js';
import { testLog } from '../../../test-log.ts';

type Kind = 'ok' | 'fail' | 'hang' | 'abort';

describe('parallel execution', () => {
  it('runs at most 3 tools at once and keeps every result in call order', async () => {
    const numRuns = 300;
    let sawFullParallelism = false;
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.constantFrom<Kind>('ok', 'ok', 'ok', 'fail', 'hang', 'abort'), { minLength: 1, maxLength: 12 }),
        async (s, kinds) => {
          const controller = new AbortController();
          let running = 0;
          let maxRunning = 0;
          const work = defineTool({
            name: 'work',
            description: 'Does scheduled work.',
            input: z.object({ i: z.number(), kind: z.enum(['ok', 'fail', 'hang', 'abort']) }),
            timeoutMs: 1,
            execute: async ({ i, kind }, { signal }) => {
              running++;
              maxRunning = Math.max(maxRunning, running);
              try {
                if (kind === 'hang') {
                  // Ends only when its signal fires: by the 1 ms timeout or by the turn's abort.
                  return await new Promise((_resolve, reject) =>
                    signal.addEventListener('abort', () => reject(new Error('hang aborted'))),
                  );
                }
                await s.schedule(Promise.resolve(), `work ${i}`);
                if (kind === 'fail') throw new Error(`fail ${i}`);
                if (kind === 'abort') controller.abort();
                return i;
              } finally {
                running--;
              }
            },
          });
          // The scheduled tools never reach their timeout; only `hang` does.
          const dispatcher = createDispatcher({
            tools: [work],
            concurrency: 3,
            defaultTimeoutMs: 60_000,
            defaultDecision: 'allow',
          });
          const calls = kinds.map((kind, i) => ({ id: `c${i}`, name: 'work', input: { i, kind } }));
          const { results, parked } = await s.waitFor(dispatcher.dispatch(calls, { turnId: 't', signal: controller.signal }));

          expect(maxRunning).toBeLessThanOrEqual(3);
          if (maxRunning === 3) sawFullParallelism = true;
          expect(parked).toEqual([]);
          expect(results.map((r) => r.callId)).toEqual(calls.map((c) => c.id));
          const cancelledBefore = "cancelled: the turn was cancelled before 'work' ran.";
          const cancelledDuring = "cancelled: 'work' was stopped because the turn was cancelled.";
          results.forEach((r, i) => {
            const allowed: Record<Kind, unknown[]> = {
              ok: [i, cancelledBefore, cancelledDuring],
              abort: [i, cancelledBefore, cancelledDuring],
              fail: [`Error calling tool 'work': Error: fail ${i}`, cancelledBefore, cancelledDuring],
              hang: ["Tool 'work' timed out after 1 ms.", cancelledBefore, cancelledDuring],
            };
            expect(allowed[kinds[i] as Kind]).toContainEqual(r.output);
            // Every error result says its kind, and the kind matches what happened.
            const text = String(r.output);
            const kind = !r.isError
              ? undefined
              : text.startsWith('cancelled:')
                ? 'cancelled'
                : text.includes('timed out')
                  ? 'timeout'
                  : 'tool_error';
            expect(r.errorKind).toBe(kind);
          });
          // Without an abort, nothing is cancelled: every call has its own outcome.
          if (!kinds.includes('abort')) expect(results.some((r) => String(r.output).startsWith('cancelled:'))).toBe(false);
        },
      ),
      { numRuns },
    );
    testLog(`parallel execution: numRuns=${numRuns}`);
    expect(sawFullParallelism).toBe(true);
  });
});
