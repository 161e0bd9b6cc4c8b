// Ctrl+C (SIGINT) and SIGTERM cancel the turn; once the outcome is printed the process exits,
// even while a tool that ignores its cancellation signal still sleeps (60 s in the fixture). The
// tests' own timeout is far below that, so a process that waits for the tool fails them.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { turnkitSignalled } from './run-cli.js';

const SLEEPY = fileURLToPath(new URL('./fixtures/sleepy.mts', import.meta.url));

describe('a signal while a tool ignores its cancellation', () => {
  it.each([
    ['SIGINT', 'interrupted with Ctrl+C'],
    ['SIGTERM', 'terminated by SIGTERM'],
  ] as const)('%s cancels the turn, prints the summary and exits with 1', { timeout: 20_000 }, async (signal, reason) => {
    const dir = await mkdtemp(join(tmpdir(), 'turnkit-cli-'));
    const run = await turnkitSignalled(['run', SLEEPY], signal, 'sleep started', { cwd: dir });
    expect(run.stderr).toBe('sleep started\n');
    expect(run.stdout).toContain('tool   → sleep call_1 {}');
    expect(run.stdout).toContain(`✖ cancelled ${reason}\n  1 model call · 1 tool call · `);
    expect(run.stdout).not.toContain('woke up');
    expect(run.code).toBe(1);
  });

  it('--json under SIGTERM still prints complete NDJSON ending with the cancelled result', { timeout: 20_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnkit-cli-'));
    const run = await turnkitSignalled(['run', SLEEPY, '--json'], 'SIGTERM', 'sleep started', { cwd: dir });
    const last = JSON.parse(run.stdout.trimEnd().split('\n').at(-1)!) as Record<string, unknown>;
    expect(last).toMatchObject({ kind: 'result', status: 'cancelled', reason: 'terminated by SIGTERM' });
    expect(run.code).toBe(1);
  });
});
