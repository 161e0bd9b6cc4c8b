// The docs site's inputs: every page of docs/ is in the index (docs/README.md, which the site's
// sidebar is made from) with a one-line description, and docs/llms.txt is the one written from the
// index, so it lists every page. The site itself is built by `pnpm run docs`, not here (see
// docs/README.md, "How these docs are built").
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DOCS_DIR, docsPages, INDEX_PAGE, LLMS_TXT, llmsFullTxt, llmsTxt, readIndex } from '../src/docs-index.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const pages = docsPages(root);
const index = readIndex(root);
const listed = index.sections.flatMap((section) => section.entries);

describe('the docs index and llms.txt', () => {
  it('finds the guides, the hand-written reference and the generated one', () => {
    expect(pages).toContain('getting-started.md');
    expect(pages).toContain('reference/dispatcher.md');
    expect(pages).toContain('reference/api/@turnkit/core.md');
  });

  it(`${INDEX_PAGE} lists every page once, each with a description, and only pages that exist`, () => {
    const paths = listed.map((entry) => entry.path);
    expect(paths.filter((path, i) => paths.indexOf(path) !== i)).toEqual([]);
    expect(pages.filter((page) => !paths.includes(page))).toEqual([]);
    expect(paths.filter((path) => !existsSync(join(root, DOCS_DIR, path)))).toEqual([]);
    expect(listed.filter((entry) => entry.description.length < 20).map((entry) => entry.path)).toEqual([]);
    expect(index.sections.map((section) => section.title)).toEqual(['Guides', 'Concepts', 'Reference']);
  });

  it(`${LLMS_TXT} is written from the index (pnpm reference rewrites it) and links to every page`, () => {
    const text = readFileSync(join(root, LLMS_TXT), 'utf8');
    expect(text, `${LLMS_TXT} is out of date: run \`pnpm reference\`.`).toBe(llmsTxt(index));
    expect(text.startsWith(`# ${index.title}\n\n> ${index.summary}\n`)).toBe(true);
    const links = [...text.matchAll(/^- \[[^\]]+\]\(([^)]+)\): \S/gm)].map((match) => match[1]);
    expect([...links].sort()).toEqual(pages);
  });

  it('llms-full.txt holds every page in full', () => {
    const full = llmsFullTxt(root, index);
    for (const page of pages) expect(full).toContain(readFileSync(join(root, DOCS_DIR, page), 'utf8').trim());
  });
});
