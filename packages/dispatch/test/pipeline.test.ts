// The composed pipeline: results are shaped exactly once, and hooks fail closed whatever they return.
import { describe, expect, it } from 'vitest';
import { echo, setup } from './fixtures.js';

describe('the pipeline', () => {
  it("cuts a halting before-hook's long output once, with the true count of cut characters", async () => {
    const { dispatcher, ctx } = setup({
      maxOutputChars: 10,
      hooks: { before: [{ name: 'cache', run: () => ({ kind: 'halt', output: 'y'.repeat(25), isError: false }) }] },
    });
    const { results } = await dispatcher.dispatch([{ id: 'c1', name: 'echo', input: { text: 'hi' } }], ctx);
    expect(results).toEqual([{ callId: 'c1', name: 'echo', output: `${'y'.repeat(10)}…[truncated 15 chars]`, isError: false }]);
  });

  it('withholds the output when an after-hook returns null, as for any unrecognised answer', async () => {
    const { dispatcher, ctx, records } = setup({
      tools: [echo],
      hooks: { after: [{ name: 'broken', run: () => null as never }] },
    });
    const { results } = await dispatcher.dispatch([{ id: 'c1', name: 'echo', input: { text: 'secret' } }], ctx);
    expect(results).toEqual([
      {
        callId: 'c1',
        name: 'echo',
        output:
          "The result of 'echo' was withheld: after-hook 'broken' returned an unrecognised value. The tool did run; do not assume it failed or succeeded.",
        isError: true,
        errorKind: 'withheld',
      },
    ]);
    expect(records.map((r) => r.decision)).toEqual(['allow']);
  });
});
