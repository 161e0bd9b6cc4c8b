import { defineConfig } from 'vitest/config';
import projects from './vitest.workspace.ts';

// Vite's default conditions, with the repository's own first: a workspace package (linked into
// node_modules by pnpm) resolves through its package.json `exports` to its sources, the same entry
// points TypeScript (tsconfig.base.json's customConditions) and `tsx --conditions=@turnkit/source` use.
const SOURCE = '@turnkit/source';
const conditions = [SOURCE, 'module', 'node', 'development|production'];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: [SOURCE] } },
  test: {
    projects,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
