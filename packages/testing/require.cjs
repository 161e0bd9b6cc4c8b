// What require('@turnkit/testing') loads. The package is an ES module with top-level await
// (it loads vitest when vitest is installed), and Node cannot require() such a module.
throw new Error(
  "@turnkit/testing cannot be loaded with require(): it is an ES module with top-level await. Use import instead: import { scriptedModel } from '@turnkit/testing', or await import('@turnkit/testing') from CommonJS.",
);
