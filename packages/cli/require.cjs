// What require('@turnkit/cli') loads. The package is an ES module with top-level await
// (through @turnkit/testing, which loads vitest when it is installed), and Node cannot require() such a module.
throw new Error(
  "@turnkit/cli cannot be loaded with require(): it is an ES module with top-level await. Use import instead: import { loadScenario } from '@turnkit/cli', or await import('@turnkit/cli') from CommonJS.",
);
