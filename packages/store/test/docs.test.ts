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

describe('examples/agents.ts (docs/agents.md, "The durable store")', () => {
  it("parks a tree in its child, takes the child's decision and shows the tree; the page shows the example and its output verbatim", async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      lines.push(format(...args));
    });
    await import('../examples/agents.js');
    const printed = `${lines.join('\n')}\n`;
    expect(printed).toContain("awaiting_approval [ 'supervisor > editor: call_1 publish' ]");
    expect(printed).toContain("stopped [ 'launch call_1 transfer_task', 'launch/call_1 call_1 publish' ]");
    const doc = readFileSync(new URL('../../../docs/agents.md', import.meta.url), 'utf8');
    const section = doc.split('## The durable store\n')[1] ?? '';
    const example = readFileSync(new URL('../examples/agents.ts', import.meta.url), 'utf8');
    expect(section.match(/```ts\n([\s\S]*?)```/)?.[1]).toBe(example);
    expect(section.match(/It prints:\n\n```text\n([\s\S]*?)```/)?.[1]).toBe(printed);
  });
});
