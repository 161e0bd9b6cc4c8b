import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import projects from './vitest.workspace.ts';

const packagesDir = fileURLToPath(new URL('./packages/', import.meta.url));

export default defineConfig({
  resolve: {
    // Tests run against each package's sources, not its build output.
    // A subpath (`@turnkit/testing/store-conformance`) maps to the file of the same name.
    alias: [
      { find: /^@turnkit\/([a-z-]+)$/, replacement: `${packagesDir}$1/src/index.ts` },
      { find: /^@turnkit\/([a-z-]+)\/([a-z-]+)$/, replacement: `${packagesDir}$1/src/$2.ts` },
    ],
  },
  test: {
    projects,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
