// The API reference in docs/reference/api/ is what TypeDoc writes from the sources now: every
// exported name of every public entry point, and every property and method of an exported
// interface, class or type, has a TSDoc comment; every `{@link}` resolves; and the committed pages
// are the generated ones (after changing an export or its comment: `pnpm reference`, then commit).
// One TypeDoc run in-process (about 15 s of CPU); the links between pages are checked by
// packages/core/test/docs-links.test.ts.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REFERENCE_DIR, readPages, referenceEntries, referenceInTemp } from '../src/reference.ts';

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
});
