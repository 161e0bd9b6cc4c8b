// The test checkAgent writes for a violation, run by vitest (a child process, as a user runs it):
// it fails against the agent with the planted mistake and passes once the agent is fixed.

import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { checkAgent } from '@turnkit/check';
import { testLog } from '../../../test-log.ts';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const DIR = fileURLToPath(new URL(`../test-artifacts/counterexample-${process.pid}/`, import.meta.url));
const EXAMPLE = readFileSync(fileURLToPath(new URL('../examples/files-agent.ts', import.meta.url)), 'utf8');
const RIGHT = "allow: ['read_file:path=/home/me/notes/*'],";
/** The planted mistake: an allow rule meant for read_file, written for every tool. */
const PLANTED = "allow: ['*:path=/home/me/*'],";

/** Runs vitest on the directory's tests the way a project would (its own config: the packages' sources, no workspace). */
function vitest(): Promise<{ code: number; output: string }> {
  const config = join(DIR, 'vitest.config.mts');
  writeFileSync(
    config,
    [
      "import { defineConfig } from 'vitest/config';",
      "const conditions = ['@turnkit/source', 'node', 'development|production'];",
      `export default defineConfig({ resolve: { conditions, alias: { '@turnkit/check': ${JSON.stringify(join(REPO, 'packages/check/src/index.ts'))} } }, ssr: { resolve: { conditions } }, test: { include: ['*.test.ts'] } });`,
      '',
    ].join('\n'),
  );
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(REPO, 'node_modules/vitest/vitest.mjs'), 'run', '--config', config, '--root', DIR],
      { cwd: DIR, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' }, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, output: stdout + stderr }),
    );
  });
}

describe('the counterexample test checkAgent writes', () => {
  afterAll(() => rmSync(DIR, { recursive: true, force: true }));

  it('fails against the agent with a broad allow pattern and passes once the pattern names its tool', async () => {
    expect(EXAMPLE).toContain(RIGHT);
    mkdirSync(DIR, { recursive: true });
    const agentFile = join(DIR, 'files-agent.ts');
    writeFileSync(agentFile, EXAMPLE.replace(RIGHT, PLANTED));
    const { agents, properties } = (await import(agentFile)) as typeof import('../examples/files-agent.ts');
    const testFile = join(DIR, 'files.counterexample.test.ts');
    const result = await checkAgent(agents.files, {
      properties,
      out: { file: testFile, agentImport: './files-agent.ts', agentName: 'files' },
    });
    expect(result.violations[0]?.property).toBe("delete_file never runs without a person's approval");
    const written = readFileSync(testFile, 'utf8');
    expect(written).toContain('toolCalls(call("delete_file", {"path":"/home/me/"}, { id: "call-1" }))');

    const buggy = await vitest();
    testLog(`counterexample test against the buggy agent: exit ${buggy.code}\n${buggy.output}`);
    expect(buggy.code).toBe(1);
    expect(buggy.output).toContain("delete_file never runs without a person's approval");
    expect(buggy.output).toContain('call-1 ran delete_file {\\"path\\":\\"/home/me/\\"} without approval');

    writeFileSync(agentFile, EXAMPLE);
    const fixed = await vitest();
    testLog(`counterexample test against the fixed agent: exit ${fixed.code}\n${fixed.output}`);
    expect(fixed.code).toBe(0);
    expect(fixed.output).toMatch(/1 passed/);
  });
});
