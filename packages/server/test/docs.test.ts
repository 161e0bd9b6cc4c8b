import { readFileSync } from 'node:fs';
import { format } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';

afterEach(() => {
  vi.restoreAllMocks();
});

const doc = () => readFileSync(new URL('../../../docs/console.md', import.meta.url), 'utf8');

describe('examples/api-client.ts (docs/console.md)', () => {
  it('runs, and the page shows the file and what it prints verbatim', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      lines.push(format(...args));
    });
    await import('../examples/api-client.js');
    const printed = `${lines.join('\n')}\n`;
    expect(printed).toContain('statuses dispatching → awaiting_approval → executing_approved → stopped');
    const section = doc().split('## The HTTP API\n')[1] ?? '';
    expect(section.match(/```ts\n([\s\S]*?)```/)?.[1]).toBe(
      readFileSync(new URL('../examples/api-client.ts', import.meta.url), 'utf8'),
    );
    expect(section.match(/It prints:\n\n```text\n([\s\S]*?)```/)?.[1]).toBe(printed);
  });

  it('names every image it shows, and each exists', () => {
    const images = [...doc().matchAll(/\]\((images\/[^)]+)\)/g)].map((m) => m[1] ?? '');
    expect(images.length).toBeGreaterThanOrEqual(5);
    for (const image of images) expect(() => readFileSync(new URL(`../../../docs/${image}`, import.meta.url))).not.toThrow();
  });
});
