// docs/model-checking.md shows examples/check-my-limits.ts verbatim; this runs it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkMyLimits } from '../examples/check-my-limits.js';
import { testLog } from '../../../test-log.ts';

const read = (path: string): string => readFileSync(fileURLToPath(new URL(path, import.meta.url)), 'utf8');

describe('docs/model-checking.md', () => {
  it('shows the example as it is in packages/check/examples/check-my-limits.ts', () => {
    expect(read('../../../docs/model-checking.md')).toContain(read('../examples/check-my-limits.ts'));
  });

  it("the example checks a user's limits", () => {
    const { states, transitions } = checkMyLimits({
      maxIterations: 2,
      loopThreshold: 2,
      maxOutputRepairs: 1,
      loopExemptTools: ['clock'],
      budget: { maxToolCalls: 3 },
    });
    testLog(`example: ${states} states, ${transitions} transitions`);
    expect(states).toBeGreaterThan(50);
  });
});
