// The API reference in docs/reference/api/ is what TypeDoc writes from the sources now: every
// exported name of every public entry point, and every property and method of an exported
// interface, class or type, has a TSDoc comment; every `{@link}` resolves; and the committed pages
// are the generated ones (after changing an export or its comment: `pnpm reference`, then commit).
// One TypeDoc run in-process (about 15 s of CPU); the links between pages are checked by
// packages/core/test/docs-links.test.ts.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generateReference, REFERENCE_DIR, readPages, referenceEntries, referenceInTemp } from '../src/reference.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));

describe('the API reference', () => {
  it('covers every public entry point and no /internal one', () => {
    const specifiers = referenceEntries(root).map((entry) => entry.specifier);
    expect(specifiers).toContain('@turnkit/core');
    expect(specifiers).toContain('@turnkit/inline/driver');
    expect(specifiers.filter((specifier) => specifier.endsWith('/internal'))).toEqual([]);
  });

  it(`documents every exported name, resolves every link, and matches ${REFERENCE_DIR}/ as committed`, async () => {
    const run = await referenceInTemp(root);
    expect(
      run.problems,
      `TypeDoc found names without a comment or links that do not resolve:\n  ${run.problems.join('\n  ')}\nAdd a /** … */ comment saying what each is for (for an option: what it does and its default).`,
    ).toEqual([]);
    const committed = readPages(join(root, REFERENCE_DIR));
    const stale = [...new Set([...committed.keys(), ...run.pages.keys()])]
      .sort()
      .filter((page) => committed.get(page) !== run.pages.get(page));
    expect(stale, `${REFERENCE_DIR}/ is out of date in these pages: run \`pnpm reference\` and commit the result.`).toEqual([]);
    expect(run.pages.size).toBe(referenceEntries(root).length + 1);
  });

  it('fails on an exported name or an interface property without a comment and on a link that does not resolve, not on the inline variants of a documented union', async () => {
    // A repository of two packages, as the generator reads this one (packages/*/package.json exports).
    const fixture = mkdtempSync(join(tmpdir(), 'turnkit-reference-fixture-'));
    try {
      const files: Record<string, string> = {
        'tsconfig.typedoc.json': JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module: 'nodenext',
            moduleResolution: 'nodenext',
            strict: true,
            types: [],
            noEmit: true,
          },
          include: ['packages/*/src/*.ts'],
        }),
        'packages/a/package.json': JSON.stringify({
          name: '@fixture/a',
          type: 'module',
          exports: { '.': { '@turnkit/source': './src/index.ts' } },
        }),
        'packages/a/src/index.ts': [
          '// The first fixture entry.',
          'export function undocumented(): number {',
          '  return 1;',
          '}',
          '/** Documented. */',
          'export interface Options {',
          '  readonly bare: number;',
          '  /** Has a comment. */',
          '  readonly commented: string;',
          '}',
          '/** A union: its variants are described here. */',
          "export type Event = { readonly type: 'a'; readonly x: number } | { readonly type: 'b' };",
          '/** See {@link Nowhere}. */',
          'export const linked = 1;',
          '',
        ].join('\n'),
        'packages/b/package.json': JSON.stringify({
          name: '@fixture/b',
          type: 'module',
          exports: { '.': { '@turnkit/source': './src/index.ts' } },
        }),
        'packages/b/src/index.ts': '// The second fixture entry.\n/** Documented. */\nexport const b = 2;\n',
      };
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(join(fixture, path, '..'), { recursive: true });
        writeFileSync(join(fixture, path), text);
      }
      const run = await generateReference(fixture, join(fixture, 'out'));
      const text = run.problems.join('\n');
      expect(text).toMatch(/undocumented .*does not have any documentation/);
      expect(text).toMatch(/Options\.bare .*does not have any documentation/);
      expect(text).toMatch(/Nowhere/);
      expect(text).not.toMatch(/commented|Event|\bb\b \(/);
      expect(run.problems).toHaveLength(3);
    } finally {
      rmSync(fixture, { recursive: true, force: true });
    }
  });
});
