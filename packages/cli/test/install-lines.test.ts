// Which lines of a page the registry test runs as install lines (registry.test.ts installs them).
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { installLines, linesOf } from './install-lines.js';

describe('linesOf', () => {
  it('reads code-block lines (a comment after them, or the line itself after //) and wrapped inline code, in order', () => {
    const page = [
      'Install it with `npm i -D',
      '@turnkit/cli tsx`, then run it.',
      '```sh',
      'npm i -g pnpm@10.34.8',
      'npm i @turnkit/core zod   # the core',
      '```',
      '```ts',
      '// npm install @turnkit/ai-sdk @ai-sdk/openai',
      "import { fromAISDK } from '@turnkit/ai-sdk';",
      '```',
    ].join('\n');
    expect(linesOf(page)).toEqual([
      'npm i -D @turnkit/cli tsx',
      'npm i @turnkit/core zod',
      'npm i @turnkit/ai-sdk @ai-sdk/openai',
    ]);
  });
});

describe('installLines', () => {
  it("starts with the README's line and has each line once", () => {
    const lines = installLines(fileURLToPath(new URL('../../../', import.meta.url)));
    expect(lines[0]).toEqual({ line: 'npm i @turnkit/core @turnkit/dispatch @turnkit/inline zod', file: 'README.md' });
    expect(new Set(lines.map(({ line }) => line)).size).toBe(lines.length);
    // A reference page's lines are read too (`turnkit serve`'s peers are written only there).
    expect(lines).toContainEqual({
      line: 'npm i -D @turnkit/server @turnkit/store @electric-sql/pglite',
      file: 'docs/reference/cli.md',
    });
  });
});
