import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { interpreterConformance } from '@turnkit/testing/conformance';
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

  it('runs the suite as its "Run the suite on it" sample shows, every line of which is in this file', () => {
    const sample = /Run the suite on it[^\n]*\n\n```ts\n([\s\S]*?)```/.exec(doc)?.[1];
    const self = readFileSync(new URL(import.meta.url), 'utf8').split('\n');
    const lines = (sample ?? '').split('\n').filter((line) => line !== '');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((line) => !self.includes(line))).toEqual([]);
  });

  it('keeps the example under 60 lines', () => {
    const lines = file.trim().split('\n').length;
    testLog(`minimal interpreter: ${lines} lines`);
    expect(lines).toBeLessThan(60);
  });
});
