import { defineConfig } from 'vitest/config';
import projects from './vitest.workspace.ts';

// Vitest's default conditions for Node (Vite's server conditions without `module`), with the
// repository's own first: a workspace package (linked into node_modules by pnpm) resolves through its
// package.json `exports` to its sources, the entry points TypeScript (tsconfig.base.json's
// customConditions) and `tsx --conditions=@turnkit/source` use too. Vitest passes these conditions
// to its workers' Node as well.
const conditions = ['@turnkit/source', 'node', 'development|production'];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    projects,
    // (packages/cli/test/signals.test.ts relies on this being far below its fixture's 60 s sleep.)
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
