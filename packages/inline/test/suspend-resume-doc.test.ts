// docs/suspend-resume.md: its examples are shown verbatim, and run in two separate node processes
// (tsx, from the sources) with the turn handed over in a file.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const tsx = createRequire(import.meta.url).resolve('tsx/cli');
const example = (name: string): string => fileURLToPath(new URL(`../examples/suspend-resume/${name}`, import.meta.url));
const doc = readFileSync(fileURLToPath(new URL('../../../docs/suspend-resume.md', import.meta.url)), 'utf8');
const blocks = [...doc.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]);

async function node(file: string, arg: string): Promise<string> {
  return (await run(process.execPath, [tsx, '--conditions=source', file, arg], { timeout: 60_000 })).stdout;
}

describe('docs/suspend-resume.md', () => {
  it('shows agent.ts, suspend.ts and resume.ts as they are', () => {
    expect(blocks).toEqual(['agent.ts', 'suspend.ts', 'resume.ts'].map((name) => readFileSync(example(name), 'utf8')));
  });

  it('suspends in one process and finishes in another, running the approved tool there', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'turnkit-suspend-')), 'turn.json');
    const first = await node(example('suspend.ts'), file);
    const firstPid = /^process (\d+) waits for: call_1 deploy\n$/.exec(first)?.[1];
    expect(first).toMatch(/^process \d+ waits for: call_1 deploy\n$/);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({
      status: 'suspended',
      pending: [{ call: { id: 'call_1', name: 'deploy' } }],
    });

    const second = (await node(example('resume.ts'), file)).split('\n');
    expect(second).toEqual([
      'user: Deploy api.',
      'assistant: [call_1 deploy]',
      expect.stringMatching(/^tool call_1 deploy: ok "deployed api from process \d+"$/),
      'assistant: api is deployed.',
      'stopped api is deployed.',
      '',
    ]);
    // The tool ran in the second process: neither in the first nor in this one.
    const ranIn = /process (\d+)"$/.exec(second[2] ?? '')?.[1];
    expect([firstPid, String(process.pid)]).not.toContain(ranIn);
  });
});
