// docs/mcp.md: its example runs and prints what the page says, and the page shows the example and
// the CLI scenario verbatim.
import { readFileSync } from 'node:fs';
import { format } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';

const doc = readFileSync(new URL('../../../docs/mcp.md', import.meta.url), 'utf8');

afterEach(() => {
  vi.restoreAllMocks();
});

describe('docs/mcp.md', () => {
  it('runs examples/in-memory.ts and prints what the page shows', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      lines.push(format(...args));
    });
    await import('../examples/in-memory.js');
    const shown = (doc.split("## A server's tools in a turn\n")[1] ?? '').match(/It prints:\n\n```text\n([\s\S]*?)```/)?.[1];
    expect(shown).toBe(`${lines.join('\n')}\n`);
    expect(lines.join('\n').split('\n')).toContain('tool call_1 weather__forecast: ok "Sunny in Oslo."');
  });

  it('shows the stdio server and its client verbatim', () => {
    const section = doc.split('## A server over stdio\n')[1] ?? '';
    const server = readFileSync(new URL('../examples/weather-server.mjs', import.meta.url), 'utf8');
    const client = readFileSync(new URL('../examples/stdio.ts', import.meta.url), 'utf8');
    expect(section.match(/```js\n([\s\S]*?)```/)?.[1]).toBe(server);
    expect(section.match(/```ts\n([\s\S]*?)```/)?.[1]).toBe(client);
  });

  it('has every code fence closed: the page is not broken from a stray block down', () => {
    const fences = doc.split('\n').filter((line) => line.startsWith('```'));
    expect(fences.length % 2).toBe(0);
    // Each example appears once, inside its block.
    const example = readFileSync(new URL('../examples/in-memory.ts', import.meta.url), 'utf8');
    expect(doc.split(example).length - 1).toBe(1);
  });

  it('shows the example and the CLI scenario verbatim', () => {
    const example = readFileSync(new URL('../examples/in-memory.ts', import.meta.url), 'utf8');
    expect((doc.split("## A server's tools in a turn\n")[1] ?? '').match(/```ts\n([\s\S]*?)```/)?.[1]).toBe(example);
    const scenario = readFileSync(new URL('../../cli/test/fixtures/mcp-status.json', import.meta.url), 'utf8');
    expect((doc.split('## MCP servers in a CLI scenario\n')[1] ?? '').match(/```json\n([\s\S]*?)```/)?.[1]).toBe(scenario);
  });
});
