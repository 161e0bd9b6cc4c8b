// docs/cli.md shows test/fixtures/add.ts verbatim as the example of a scenario module; this runs it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  it('runs the stored-turns session as shown (a fresh store for /tmp/demo/store)', async () => {
    const doc = read('../../../docs/cli.md').split('## Stored turns')[1] ?? '';
    const block = doc.match(/```\n([\s\S]*?)```/)?.[1] ?? '';
    const steps = block.split(/^\$ turnkit /m).slice(1);
    expect(steps.map((step) => step.split(' ')[0])).toEqual(['run', 'approve', 'reject', 'worker', 'show', 'ls']);
    const store = join(await mkdtemp(join(tmpdir(), 'turnkit-docs-')), 'store');
    for (const step of steps) {
      const [line = '', ...shown] = step.split('\n');
      // Words as a shell splits these lines: plain words and '…' strings.
      const args = [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => (m[1] ?? m[2] ?? '').replace('/tmp/demo/store', store));
      const run = await turnkit(args);
      const printed = `${run.stdout}${run.stderr}`.replaceAll(store, '/tmp/demo/store');
      const timestamp = /\d{4}-\d\d-\d\dT[\d:.]+\+00:00/g;
      expect(printed.replace(timestamp, 'TIME'), line).toBe(shown.join('\n').replace(timestamp, 'TIME'));
    }
  }, 120_000);
});
