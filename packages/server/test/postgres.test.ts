// The API over a real Postgres, when TURNKIT_TEST_POSTGRES_URL names one (.ci/run starts it);
// skipped otherwise. The tables live in a scratch schema, dropped at the end.
import { openStore, type Store } from '@turnkit/store';
import { openSql } from '@turnkit/store/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, serve } from '../src/index.js';
import { TOKEN } from './helpers.js';

const POSTGRES_URL = process.env.TURNKIT_TEST_POSTGRES_URL || undefined;

describe.skipIf(POSTGRES_URL === undefined)('the HTTP API on Postgres', () => {
  const schema = `turnkit_test_server_${process.pid}_${Date.now().toString(36)}`;
  let store: Store;
  let server: RunningServer;
  beforeAll(async () => {
    store = await openStore(POSTGRES_URL as string, { schema });
    server = await serve({ store, token: TOKEN });
  });
  afterAll(async () => {
    await server?.close();
    await store?.close();
    const sql = await openSql(POSTGRES_URL as string);
    try {
      await sql.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    } finally {
      await sql.close();
    }
  });

  it('concurrent POST /api/turns with one id: one 201, every other one 409', async () => {
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${server.url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      });
    // Open the HTTP and database connections first, so the posts arrive together and most of them
    // look for the id before any has inserted it: the store's insert decides between those.
    await Promise.all(Array.from({ length: 40 }, () => api('/api/turns?limit=1').then((r) => r.json())));
    const post = () =>
      api('/api/turns', { method: 'POST', body: JSON.stringify({ agent: 'support', input: 'Hello', id: 'raced' }) });
    const responses = await Promise.all(Array.from({ length: 40 }, post));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([201, ...Array(39).fill(409)]);
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as object[];
    expect(bodies.filter((b) => 'id' in b)).toEqual([{ id: 'raced' }]);
    for (const body of bodies.filter((b) => 'error' in b))
      expect(body).toEqual({
        error: { code: 'conflict', message: "A turn with id 'raced' exists; pick another id or leave id out.", field: 'body.id' },
      });
  });
});
