// docs/telemetry.md: its example runs and prints what the page says, and the page shows it verbatim.
import { readFileSync } from 'node:fs';
import { format } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';

const doc = readFileSync(new URL('../../../docs/telemetry.md', import.meta.url), 'utf8');
const section = doc.split('## A traced turn\n')[1] ?? '';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('docs/telemetry.md', () => {
  it('runs examples/trace.ts and prints the span tree the page shows', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      lines.push(format(...args));
    });
    await import('../examples/trace.js');
    expect(lines).toEqual([
      'invoke_agent calculator',
      '  chat gpt-4.1-mini',
      '  execute_tool add',
      '  chat gpt-4.1-mini (output tokens: 6)',
    ]);
    expect(section.match(/It prints:\n\n```text\n([\s\S]*?)```/)?.[1]).toBe(`${lines.join('\n')}\n`);
  });

  it('runs examples/park-and-resume.ts: the resumed activation links to the suspended one', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      lines.push(format(...args));
    });
    await import('../examples/park-and-resume.js');
    expect(lines).toEqual(['invoke_agent deployer suspended', 'invoke_agent deployer stopped linked to the first: true']);
    const parked = doc.split('## A turn parked for a day\n')[1] ?? '';
    expect(parked.match(/```ts\n([\s\S]*?)```/)?.[1]).toBe(
      readFileSync(new URL('../examples/park-and-resume.ts', import.meta.url), 'utf8'),
    );
    expect(parked.match(/It prints:\n\n```text\n([\s\S]*?)```/)?.[1]).toBe(`${lines.join('\n')}\n`);
  });

  it('shows the example verbatim and names the convention version the package follows', async () => {
    const example = readFileSync(new URL('../examples/trace.ts', import.meta.url), 'utf8');
    expect(section.match(/```ts\n([\s\S]*?)```/)?.[1]).toBe(example);
    const { SEMCONV_VERSION } = await import('@turnkit/otel');
    expect(doc).toContain(`version\n**${SEMCONV_VERSION}** (\`SEMCONV_VERSION\`)`);
  });

  it('runs examples/stored-turn.ts: a stored turn traced by workers, the second activation linked to the first', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      lines.push(format(...args));
    });
    await import('../examples/stored-turn.js');
    expect(lines).toEqual(['invoke_agent deployer suspended', 'invoke_agent deployer true linked to the first: true']);
    const stored = doc.split('## Stored turns\n')[1] ?? '';
    expect(stored.match(/```ts\n([\s\S]*?)```/)?.[1]).toBe(
      readFileSync(new URL('../examples/stored-turn.ts', import.meta.url), 'utf8'),
    );
    expect(stored.match(/It prints:\n\n```text\n([\s\S]*?)```/)?.[1]).toBe(`${lines.join('\n')}\n`);
  });
});
