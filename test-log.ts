// What the tests measured or explored (numRuns, state counts, benchmark tables), printed only when
// asked with TURNKIT_TEST_VERBOSE=1, so a green `pnpm test` stays quiet. Tests print through this
// and never call console.log themselves (packages/core/test/repo.test.ts checks that).

/** True when TURNKIT_TEST_VERBOSE=1. */
export const testVerbose = process.env.TURNKIT_TEST_VERBOSE === '1';

/** console.log, when TURNKIT_TEST_VERBOSE=1; nothing otherwise. */
export function testLog(...values: unknown[]): void {
  if (testVerbose) console.log(...values);
}
