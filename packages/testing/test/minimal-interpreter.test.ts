import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { interpreterConformance } from '@turnkit/testing';
import { runMinimal } from '../examples/minimal-interpreter.js';
import { testLog } from '../../../test-log.ts';

// The interpreter of docs/custom-interpreter.md passes the same suite as @turnkit/inline.
interpreterConformance('minimal example', runMinimal);

describe('docs/custom-interpreter.md', () => {
  const file = readFileSync(new URL('../examples/minimal-interpreter.ts', import.meta.url), 'utf8');
  const doc = readFileSync(new URL('../../../docs/custom-interpreter.md', import.meta.url), 'utf8');

  it('shows the example file as it is in the repo', () => {
    expect(doc).toContain(file.trim());
  });

  it('keeps the example under 60 lines', () => {
    const lines = file.trim().split('\n').length;
    testLog(`minimal interpreter: ${lines} lines`);
    expect(lines).toBeLessThan(60);
  });
});
