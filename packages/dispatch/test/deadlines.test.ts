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
    expect(ended.f).toBeGreaterThanOrEqual(39);
    expect(ended.s).toBeGreaterThanOrEqual(299);
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
