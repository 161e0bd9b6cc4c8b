// The docs site's inputs, read from docs/: the pages, the index (docs/README.md: every page with a
// one-line description, under Guides, Concepts and Reference) and llms.txt, written from the index
// in the llmstxt.org format. The site's configuration (docs/.vitepress/config.mts) makes its
// sidebar from the index; `pnpm run docs` (docs-site.ts) builds the site. packages/bench/test/docs-site.test.ts
// checks these inputs; docs/README.md says how it all fits.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** One page of the index: its link text, its path under docs/, and what it is for. */
export interface IndexEntry {
  readonly title: string;
  readonly path: string;
  readonly description: string;
}

/** One section of the index (`## Guides`, …) with its pages in order. */
export interface IndexSection {
  readonly title: string;
  readonly entries: readonly IndexEntry[];
}

/** The docs index (docs/README.md) as data. */
export interface DocsIndex {
  readonly title: string;
  /** The blockquote under the title: the one-paragraph summary llms.txt starts with. */
  readonly summary: string;
  readonly sections: readonly IndexSection[];
}

/** The folder the site is built from. */
export const DOCS_DIR = 'docs';

/** The index page: every page of docs/ listed with a one-line description. */
export const INDEX_PAGE = 'docs/README.md';

/** Where llms.txt is committed (beside the pages its relative links name). */
export const LLMS_TXT = 'docs/llms.txt';

/** Every markdown page under docs/ but the index, relative to docs/, sorted. */
export function docsPages(root: string): string[] {
  const base = join(root, DOCS_DIR);
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      if (name.startsWith('.') || name === 'node_modules' || name === 'public') continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.md')) found.push(relative(base, path));
    }
  };
  walk(base);
  return found.filter((page) => page !== 'README.md').sort();
}

const ENTRY = /^- \[(.+?)\]\(([^)\s]+)\): (.+)$/;

/** Reads the index. Throws, naming the line, when its title or summary is missing. */
export function readIndex(root: string): DocsIndex {
  const lines = readFileSync(join(root, INDEX_PAGE), 'utf8').split('\n');
  const title = lines.find((line) => line.startsWith('# '))?.slice(2);
  const summary = lines.find((line) => line.startsWith('> '))?.slice(2);
  if (title === undefined || summary === undefined) throw new Error(`${INDEX_PAGE} needs a "# title" and a "> summary" line.`);
  const sections: { title: string; entries: IndexEntry[] }[] = [];
  for (const line of lines) {
    if (line.startsWith('## ')) sections.push({ title: line.slice(3), entries: [] });
    const match = ENTRY.exec(line);
    if (match !== null && sections.length > 0) {
      const [, text = '', path = '', description = ''] = match;
      sections[sections.length - 1]?.entries.push({ title: text, path, description });
    }
  }
  return { title, summary, sections: sections.filter((section) => section.entries.length > 0) };
}

/** llms.txt (llmstxt.org): the title, the summary, then each section's pages with their descriptions. */
export function llmsTxt(index: DocsIndex): string {
  const parts = [
    `# ${index.title}`,
    '',
    `> ${index.summary}`,
    '',
    'Each link is the markdown source of a page, relative to this file. Guides teach one task each with tested code; the reference lists every name, option, rule and error.',
  ];
  for (const section of index.sections) {
    parts.push('', `## ${section.title}`, '');
    for (const entry of section.entries) parts.push(`- [${entry.title}](${entry.path}): ${entry.description}`);
  }
  return `${parts.join('\n')}\n`;
}

/** llms-full.txt: every page of the index in its order, each under a line naming its path. */
export function llmsFullTxt(root: string, index: DocsIndex): string {
  const pages = index.sections.flatMap((section) => section.entries.map((entry) => entry.path));
  const parts = [`# ${index.title}`, '', `> ${index.summary}`];
  for (const page of pages) {
    parts.push('', `<!-- ${DOCS_DIR}/${page} -->`, '', readFileSync(join(root, DOCS_DIR, page), 'utf8').trim());
  }
  return `${parts.join('\n')}\n`;
}
