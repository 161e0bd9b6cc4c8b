// docs/conversations.md: its example, packages/store/examples/conversation.ts, run as two
// processes over one PGlite store (the first answers a message and parks a refund, the second
// approves it and answers a third message); the page shows the file verbatim and what it prints.

import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const EXAMPLE = fileURLToPath(new URL('../examples/conversation.ts', import.meta.url));
const doc = (): string => readFileSync(new URL('../../../docs/conversations.md', import.meta.url), 'utf8');
const section = (): string => doc().split('## A support agent across two processes\n')[1] ?? '';

async function phase(store: string, which: 'first' | 'second'): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--conditions=@turnkit/source', EXAMPLE, store, which], {
    cwd: REPO,
    timeout: 60_000,
  });
  return stdout;
}

describe('docs/conversations.md', () => {
  it('runs the support conversation across two processes and shows what they print', async () => {
    const store = join(mkdtempSync(join(tmpdir(), 'turnkit-conversation-')), 'store');
    const first = await phase(store, 'first');
    const second = await phase(store, 'second');
    const printed = `${first}${second}`;
    expect(printed.split('\n').slice(0, 2)).toEqual([
      'first process: awaiting_approval, waiting on refund',
      'second process: stopped, stopped, stopped',
    ]);
    expect(printed).toContain('tool call_6 refund: ok "refunded A-17"');
    expect(section().match(/It prints:\n\n```text\n([\s\S]*?)```/)?.[1]).toBe(printed);
  });

  it('shows the example verbatim', () => {
    expect(section().match(/```ts\n([\s\S]*?)```/)?.[1]).toBe(readFileSync(EXAMPLE, 'utf8'));
  });
});
