// The console's browser test once more, over turns on DBOS (@turnkit/dbos) instead of the store:
// the same server, console and assertions against the same client API, on a fresh database of the
// test Postgres (TURNKIT_TEST_POSTGRES_URL, which .ci/run sets).
import { afterAll, it } from 'vitest';
import { dropDatabase, freshDatabase, POSTGRES_URL, WHY_SKIPPED } from '../../dbos/test/postgres.js';

if (POSTGRES_URL === undefined) {
  it.skip(`the console over turns on DBOS (skipped: ${WHY_SKIPPED})`, () => undefined);
} else {
  const url = await freshDatabase('console');
  // helpers.ts's startServer reads it: the browser test's server runs its turns on DBOS.
  process.env.TURNKIT_TEST_DBOS_URL = url;
  afterAll(() => dropDatabase(url));
  await import('./browser.test.js');
}
