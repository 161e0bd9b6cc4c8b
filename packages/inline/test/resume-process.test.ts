import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runTurn } from '@turnkit/inline';
import { call, scriptedModel, toolCalls } from '@turnkit/testing';
import { add, deploy } from './fixtures/tools.mjs';

const run = promisify(execFile);
const child = fileURLToPath(new URL('./fixtures/resume-child.mjs', import.meta.url));
const built = ['core', 'dispatch', 'inline', 'testing'].map((p) =>
  fileURLToPath(new URL(`../../${p}/dist/index.js`, import.meta.url)),
);

describe('suspend, serialise, resume in a new process', () => {
  it('finishes a suspended turn in a child process from its JSON', async () => {
    const missing = built.filter((file) => !existsSync(file));
    expect(
      missing,
      'build first: pnpm --filter @turnkit/core --filter @turnkit/dispatch --filter @turnkit/inline --filter @turnkit/testing build',
    ).toEqual([]);

    const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 }), call('deploy', { service: 'api' }))]);
    const first = await runTurn({
      model,
      tools: [add, deploy],
      input: 'Deploy api and add 1 + 2.',
      system: 'You deploy things.',
      id: 'turn-42',
    });
    expect(first.status).toBe('suspended');
    expect(first.pending?.map((p) => p.call.id)).toEqual(['call_2']);
    model.assertDone();

    const file = join(mkdtempSync(join(tmpdir(), 'turnkit-resume-')), 'turn.json');
    writeFileSync(file, JSON.stringify(first));
    const { stdout } = await run(process.execPath, [child, file], { timeout: 30_000 });
    const resumed = JSON.parse(stdout) as {
      status: string;
      error?: unknown;
      output: unknown;
      lines: string[];
      modelCalls: number;
    };

    expect(resumed.error).toBeUndefined();
    expect(resumed.status).toBe('stopped');
    expect(resumed.output).toBe('Deployed api; 1 + 2 = 3.');
    expect(resumed.lines.slice(0, 4)).toEqual([
      'system: You deploy things.',
      'user: Deploy api and add 1 + 2.',
      'assistant: [call_1 add, call_2 deploy]',
      'tool call_1 add: ok 3',
    ]);
    // The approved call ran in the child, not in this process.
    expect(resumed.lines[4]).toMatch(/^tool call_2 deploy: ok "deployed api in process (\d+)"$/);
    expect(resumed.lines[4]).not.toContain(`process ${process.pid}"`);
    expect(resumed.lines[5]).toBe('assistant: Deployed api; 1 + 2 = 3.');
    expect(resumed.modelCalls).toBe(2);
  });
});
