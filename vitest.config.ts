import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import projects, { longestTests } from './vitest.workspace.ts';

// Vitest's default conditions for Node (Vite's server conditions without `module`), with the
// repository's own first: a workspace package (linked into node_modules by pnpm) resolves through its
// package.json `exports` to its sources, the entry points TypeScript (tsconfig.base.json's
// customConditions) and `tsx --conditions=@turnkit/source` use too. Vitest passes these conditions
// to its workers' Node as well.
const conditions = ['@turnkit/source', 'node', 'development|production'];

/** vitest's order (earlier timings, else file size), with the files of `longestTests` first, longest first. */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = (spec: TestSpecification): number =>
      longestTests[relative(spec.project.config.root, spec.moduleId).split('\\').join('/')] ?? 0;
    // Array.prototype.sort is stable: files of equal weight keep vitest's order.
    return (await super.sort(files)).sort((a, b) => seconds(b) - seconds(a));
  }
}

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    projects,
    sequence: { sequencer: LongestFirst },
    // The copy of a fresh PGlite cluster new directory stores start from, made once before the files run.
    globalSetup: ['./packages/store/test/pglite-global-setup.ts'],
    // (packages/cli/test/signals.test.ts relies on this being far below its fixture's 60 s sleep.)
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
