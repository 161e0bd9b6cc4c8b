// The docs site (`pnpm run docs`, `pnpm docs:dev`): VitePress over docs/. The sidebar is the index
// (docs/README.md, which is also the home page), so a page is in the site's navigation exactly when
// it is in the index; packages/bench/test/docs-site.test.ts checks every page is.
import { defineConfig } from 'vitepress';
import { readIndex } from '../../packages/bench/src/docs-index.ts';

const root = new URL('../../', import.meta.url).pathname;
const index = readIndex(root);

/** A page's path under docs/ as a site link. */
const link = (path: string): string => `/${path.replace(/(^|\/)index\.md$/, '$1').replace(/\.md$/, '')}`;

export default defineConfig({
  title: 'turnkit',
  description: index.summary,
  rewrites: { 'README.md': 'index.md' },
  // The pages link to the repository's README, sources and examples (../packages/…), which are not
  // pages of the site; every other link must lead to a page (a dead one fails the build).
  ignoreDeadLinks: [(url: string) => /(^|\/)\.\.\/(\.\.\/)*(packages\/|README|LICENSE)/.test(url)],
  lastUpdated: false,
  themeConfig: {
    nav: [
      { text: 'Guides', link: '/getting-started' },
      { text: 'Reference', link: '/reference/api/' },
    ],
    sidebar: index.sections.map((section) => ({
      text: section.title,
      items: section.entries.map((entry) => ({ text: entry.title.replaceAll('`', ''), link: link(entry.path) })),
    })),
    outline: [2, 3],
    search: { provider: 'local' },
  },
});
