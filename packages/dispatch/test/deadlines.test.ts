// Tool timeouts: each pending call's deadline expires on time, whatever the order of deadlines,
// and a settled call leaves nothing that keeps the process alive.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDispatcher, defineTool } from '../src/index.js';

const hang = (name: string, timeoutMs: number) =>
  defineTool({
    name,
    description: 'Never answers.',
    input: z.object({}),
    readOnly: true,
    timeoutMs,
    execute: () => new Promise(() => {}),
  });

const quick = defineTool({
  name: 'quick',
  description: 'Answers at once, asynchronously.',
  input: z.object({}),
  readOnly: true,
  execute: async () => 'ok',
});

const TIMER_SLACK_MS = 10;

const activeTimeouts = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('tool deadlines', () => {
  it('expire each call at its own timeout, a shorter one after a longer one included', async () => {
    const dispatcher = createDispatcher({ tools: [hang('slow', 300), hang('fast', 40), quick], concurrency: 3 });
    const started = performance.now();
    const ended: Record<string, number> = {};
    const { results } = await dispatcher.dispatch(
      [
        { id: 's', name: 'slow', input: {} },
        { id: 'f', name: 'fast', input: {} },
        { id: 'q', name: 'quick', input: {} },
      ],
      { turnId: 't', onResult: (r) => void (ended[r.callId] = performance.now() - started) },
    );
    expect(results.map((r) => [r.callId, r.errorKind ?? r.output])).toEqual([
      ['s', 'timeout'],
      ['f', 'timeout'],
      ['q', 'ok'],
    ]);
    // Node starts a timer from the event loop's cached clock, which can lag `performance.now()` by a
    // few milliseconds on a loaded machine, so a timer may end a little before its time as seen here.
    expect(ended.f).toBeGreaterThanOrEqual(40 - TIMER_SLACK_MS);
    expect(ended.s).toBeGreaterThanOrEqual(300 - TIMER_SLACK_MS);
    expect(ended.f).toBeLessThan(ended.s ?? 0);
  });

  it('leave no timer keeping the process alive once every call has settled', async () => {
    const before = activeTimeouts();
    const dispatcher = createDispatcher({ tools: [quick] });
    for (let i = 0; i < 50; i++) {
      const { results } = await dispatcher.dispatch([{ id: `q${i}`, name: 'quick', input: {} }], { turnId: 't' });
      expect(results[0]?.output).toBe('ok');
    }
    expect(activeTimeouts()).toBeLessThanOrEqual(before);
  });
});
