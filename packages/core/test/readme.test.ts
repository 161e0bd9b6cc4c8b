// Runs the "Drive a turn by hand" block of the README exactly as written, so the README cannot rot.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';

const readme = readFileSync(fileURLToPath(new URL('../../../README.md', import.meta.url)), 'utf8');
const coreEntry = fileURLToPath(new URL('../src/index.ts', import.meta.url));

function block(heading: string): string {
  const section = readme.split(`## ${heading}\n`)[1];
  const code = section?.match(/```ts\n([\s\S]*?)```/)?.[1];
  if (code === undefined) throw new Error(`README has no \`\`\`ts block under "## ${heading}"`);
  return code;
}

describe('README', () => {
  afterEach(() => vi.restoreAllMocks());

  it('"Drive a turn by hand" runs and ends the turn as it says', async () => {
    const code = block('Drive a turn by hand');
    expect(code.split('\n').filter((line) => line.trim() !== '').length).toBeLessThanOrEqual(16);
    const dir = mkdtempSync(join(tmpdir(), 'turnkit-readme-'));
    const file = join(dir, 'example.ts');
    writeFileSync(file, code.replace("'@turnkit/core'", JSON.stringify(coreEntry)));
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      lines.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
    });
    await import(pathToFileURL(file).href);
    expect(lines[0]).toBe('calling_model → append, emit, emit, call_llm');
    expect(lines[1]).toBe('dispatching   → append, persist, dispatch_tools');
    expect(lines.at(-1)).toBe('stopped {"status":"stopped","stopReason":"completed","output":"2 + 3 = 5"}');
  });
});
