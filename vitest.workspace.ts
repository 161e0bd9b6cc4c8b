// The list of test projects, one per package. Vitest 4 no longer reads this file on its own:
// vitest.config.ts imports it as `test.projects`.
const packages = [
  'core',
  'dispatch',
  'testing',
  'inline',
  'stream',
  'check',
  'ai-sdk',
  'cli',
  'bench',
  'store',
  'server',
  'otel',
  'mcp',
];

export const projects = packages.map((name) => ({
  extends: true as const,
  test: {
    name,
    root: `packages/${name}`,
    include: ['test/**/*.test.ts'],
  },
}));

export default projects;
