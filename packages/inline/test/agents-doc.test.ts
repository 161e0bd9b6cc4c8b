// docs/agents.md shows examples/agents.ts verbatim, and the timeline it prints.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';

afterEach(() => {
  vi.restoreAllMocks();
});

const doc = readFileSync(new URL('../../../docs/agents.md', import.meta.url), 'utf8');
const section = doc.split('## A supervisor\n')[1] ?? '';

describe('docs/agents.md, "A supervisor"', () => {
  it('shows examples/agents.ts verbatim', () => {
    const example = readFileSync(new URL('../examples/agents.ts', import.meta.url), 'utf8');
    expect(section.match(/```ts\n([\s\S]*?)```/)?.[1]).toBe(example);
  });

  it('shows what the example prints: the tree as a timeline', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(' '));
    });
    await import('../examples/agents.js');
    expect(`${lines.join('\n')}\n`).toBe(section.match(/```text\n([\s\S]*?)```/)?.[1]);
  });
});
