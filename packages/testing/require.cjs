// What require('@turnkit/testing') loads. The package is an ES module with top-level await
// (it loads vitest when vitest is installed), and Node cannot require() such a module.
// The code is Node's own for this case, so callers that handle it (such as turnkit's scenario
// loader) recognise it.
throw Object.assign(
  new Error(
    "@turnkit/testing cannot be loaded with require(): it is an ES module with top-level await. Use import instead: import { scriptedModel } from '@turnkit/testing', or await import('@turnkit/testing') from CommonJS.",
  ),
  { code: 'ERR_REQUIRE_ASYNC_MODULE' },
);
