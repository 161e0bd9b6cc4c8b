import { afterEach, describe, expect, it, vi } from 'vitest';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('examples/readme.ts (the README main example)', () => {
  it('runs a scripted turn and prints its transcript', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(' '));
    });
    await import('../examples/readme.js');
    expect(lines.join('\n').split('\n')).toEqual([
      'system: You are a calculator.',
      'user: What is 1 + 2?',
      'assistant: [call_1 add]',
      'tool call_1 add: ok 3',
      'assistant: 1 + 2 = 3',
      'stopped completed 1 + 2 = 3',
    ]);
  });
});

describe('README.md', () => {
  it('shows examples/readme.ts verbatim under "Run a turn in-process"', async () => {
    const { readFileSync } = await import('node:fs');
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const example = readFileSync(new URL('../examples/readme.ts', import.meta.url), 'utf8');
    const section = readme.split('## Run a turn in-process\n')[1] ?? '';
    expect(section.match(/```ts\n([\s\S]*?)```/)?.[1]).toBe(example);
  });
});
