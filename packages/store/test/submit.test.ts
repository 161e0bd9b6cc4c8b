import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store, TurnExistsError } from '@turnkit/store';
import { dropSchema, POSTGRES_URL, scratchSchema } from './postgres.js';

describe.skipIf(POSTGRES_URL === undefined)('store.submit with an id on Postgres', () => {
  const schema = scratchSchema('submit');
  let store: Store;
  beforeAll(async () => {
    store = await openStore(POSTGRES_URL as string, { schema });
  });
  afterAll(async () => {
    await store?.close();
    await dropSchema(schema);
  });

  it('many submits of one id at once: exactly one succeeds, every other one gets TurnExistsError', async () => {
    // All 40 inserts are in flight together (the pool's connections run them at once), so the
    // losers find the winner's row only through the primary key's unique violation.
    const id = 'raced';
    const settled = await Promise.allSettled(Array.from({ length: 40 }, () => store.submit({ agent: 'a', id })));
    expect(settled.filter((s) => s.status === 'fulfilled').map((s) => s.value)).toEqual([id]);
    const refused = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason] : []));
    expect(refused).toHaveLength(39);
    for (const error of refused) {
      expect(error).toBeInstanceOf(TurnExistsError);
      expect(error).toMatchObject({ name: 'TurnExistsError', turnId: id });
      expect((error as Error).message).toMatch(/a turn with id 'raced' exists already; pick another id or leave `id` out/);
    }
    // A later submit of the id is the same error.
    await expect(store.submit({ agent: 'a', id })).rejects.toBeInstanceOf(TurnExistsError);
    expect((await store.get(id))?.status).toBe('ready');
  });
});
