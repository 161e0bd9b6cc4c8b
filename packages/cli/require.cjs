// What require('@turnkit/cli') loads. The package is an ES module with top-level await
// (through @turnkit/testing, which loads vitest when it is installed), and Node cannot require() such a module.
// The code is Node's own for this case, so callers that handle it (such as turnkit's scenario
// loader) recognise it.
throw Object.assign(
  new Error(
    "@turnkit/cli cannot be loaded with require(): it is an ES module with top-level await. Use import instead: import { loadScenario } from '@turnkit/cli', or await import('@turnkit/cli') from CommonJS.",
  ),
  { code: 'ERR_REQUIRE_ASYNC_MODULE' },
);
