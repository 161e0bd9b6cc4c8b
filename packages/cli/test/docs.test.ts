// docs/cli.md shows test/fixtures/add.ts verbatim as the example of a scenario module; this runs it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { turnkit } from './run-cli.js';

const ADD = fileURLToPath(new URL('./fixtures/add.ts', import.meta.url));
const read = (path: string): string => readFileSync(new URL(path, import.meta.url), 'utf8');

describe('docs/cli.md', () => {
  it('shows the scenario module test/fixtures/add.ts as it is', () => {
    expect(read('../../../docs/cli.md')).toContain(`\`\`\`ts\n${read('./fixtures/add.ts')}\`\`\``);
  });

  it('runs that scenario', async () => {
    const run = await turnkit(['run', ADD]);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('tool   ✓ add call_1');
    expect(run.stdout).toContain('✔ stopped: completed · 2 model calls · 1 tool call');
    expect(run.code).toBe(0);
  });
});
