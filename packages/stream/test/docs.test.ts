// Runs the "Consuming the stream" block of docs/streaming.md as written; the test only supplies
// the `model` and `add` it refers to (a scripted model and a real tool).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';

const doc = readFileSync(fileURLToPath(new URL('../../../docs/streaming.md', import.meta.url)), 'utf8');
const src = (pkg: string): string => JSON.stringify(fileURLToPath(new URL(`../../${pkg}/src/index.ts`, import.meta.url)));

describe('docs/streaming.md', () => {
  afterEach(() => vi.restoreAllMocks());

  it('"Consuming the stream" runs and prints the deltas, the tool call and its result', async () => {
    const block = doc.split('## Consuming the stream\n')[1]?.match(/```ts\n([\s\S]*?)```/)?.[1];
    expect(block, 'docs/streaming.md has a ts block under "Consuming the stream"').toBeDefined();
    const prelude = [
      `import { z } from ${JSON.stringify(import.meta.resolve('zod'))};`, // the file is outside the repository
      `import { defineTool } from ${src('dispatch')};`,
      `import { call, scriptedModel, text, toolCalls } from ${src('testing')};`,
      `const add = defineTool({ name: 'add', description: 'Adds.', input: z.object({ a: z.number(), b: z.number() }), readOnly: true, execute: ({ a, b }) => a + b });`,
      `const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('1 + 2 = 3')]);`,
    ].join('\n');
    const code = `${prelude}\n${(block as string).replace("'@turnkit/stream'", src('stream'))}\nexport { result };\n`;
    const file = join(mkdtempSync(join(tmpdir(), 'turnkit-streaming-doc-')), 'example.ts');
    writeFileSync(file, code);
    let out = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out += String(chunk);
      return true;
    });
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      out += `${args.join(' ')}\n`;
    });
    const { result } = (await import(pathToFileURL(file).href)) as { result: { status: string; output: unknown } };
    expect(out).toContain('→ add({"a":1,"b":2})');
    expect(out).toContain('← 3');
    expect(out).toContain('1 + 2 = 3');
    expect(result).toMatchObject({ status: 'stopped', output: '1 + 2 = 3' });
  });
});
