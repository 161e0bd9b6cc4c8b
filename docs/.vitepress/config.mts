// The docs site (`pnpm run docs`, `pnpm docs:dev`): VitePress over docs/. The sidebar is the index
// (docs/README.md, which is also the home page), so a page is in the site's navigation exactly when
// it is in the index; packages/bench/test/docs-site.test.ts checks every page is.
import { renderMermaidSVG } from 'beautiful-mermaid';
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
  markdown: {
    // A ```mermaid block (the turn machine's diagram) is drawn at build time, as the console draws
    // it (beautiful-mermaid: no browser, no network), and shown as an image; GitHub draws the block itself.
    config: (md) => {
      const fence = md.renderer.rules.fence;
      md.renderer.rules.fence = (tokens, idx, options, env, self) => {
        const token = tokens[idx];
        if (token === undefined || token.info.trim() !== 'mermaid' || fence === undefined)
          return fence === undefined ? self.renderToken(tokens, idx, options) : fence(tokens, idx, options, env, self);
        const svg = renderMermaidSVG(token.content, { bg: '#ffffff', fg: '#1f2937', accent: '#4338ca', font: 'system-ui', padding: 16 });
        return `<p class="diagram"><img alt="A diagram (its Mermaid source is in the page's markdown)" src="data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}"></p>\n`;
      };
    },
  },
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
