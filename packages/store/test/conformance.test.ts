// The store contract, on PGlite in memory and (when TURNKIT_TEST_POSTGRES_URL is set) on a real
// Postgres, in a scratch schema dropped afterwards.
import { createWorker, openStore } from '@turnkit/store';
import { storeConformance } from '@turnkit/testing/store-conformance';
import { dropSchema, POSTGRES_URL, scratchSchema, WHY_SKIPPED } from './postgres.js';

storeConformance(() => openStore('memory://'), { name: 'PGlite (memory://)', createWorker });

const schema = scratchSchema('conformance');
storeConformance(() => openStore(POSTGRES_URL ?? '', { schema }), {
  name: 'Postgres',
  createWorker,
  skip: POSTGRES_URL === undefined ? WHY_SKIPPED : false,
  cleanup: () => dropSchema(schema),
});
