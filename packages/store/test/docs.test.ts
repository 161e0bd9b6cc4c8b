import { readFileSync } from 'node:fs';
import { format } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('examples/durable.ts (the guide in docs/durable-turns.md)', () => {
  it('parks a turn, takes a decision and finishes it', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      lines.push(format(...args));
    });
    await import('../examples/durable.js');
    const printed = lines.join('\n').split('\n');
    expect(printed).toEqual([
      "awaiting_approval [ 'refund' ]",
      'user: Please refund order A-17.',
      'assistant: [call_1 refund]',
      'tool call_1 refund: ok "refunded A-17"',
      'assistant: Order A-17 is refunded.',
      'stopped {"status":"stopped","stopReason":"completed","output":"Order A-17 is refunded."}',
    ]);
    // The guide shows the same output.
    const doc = readFileSync(new URL('../../../docs/durable-turns.md', import.meta.url), 'utf8');
    const shown = (doc.split('## A turn that waits for a person\n')[1] ?? '').match(/It prints:\n\n```text\n([\s\S]*?)```/)?.[1];
    expect(shown).toBe(`${printed.join('\n')}\n`);
  });

  it('docs/durable-turns.md shows the example verbatim', () => {
    const doc = readFileSync(new URL('../../../docs/durable-turns.md', import.meta.url), 'utf8');
    const example = readFileSync(new URL('../examples/durable.ts', import.meta.url), 'utf8');
    const section = doc.split('## A turn that waits for a person\n')[1] ?? '';
    expect(section.match(/```ts\n([\s\S]*?)```/)?.[1]).toBe(example);
  });
});
