import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../src/api.js';
import { createServer } from '../src/server.js';
import { startServer, type TestServer, TOKEN, waitForStatus } from './helpers.js';

let t: TestServer;
beforeAll(async () => {
  t = await startServer();
});
afterAll(async () => {
  await t.close();
});

interface Doc {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, unknown>; security?: unknown[] }>>;
  components: { securitySchemes: Record<string, unknown> };
}

const operations = (doc: Doc): string[] =>
  Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} /api${path}`));

describe('the OpenAPI description', () => {
  it('lists exactly the routes the server has, each behind the bearer token', async () => {
    const doc = (await (await t.api('/api/openapi.json')).json()) as Doc;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes).toEqual({ bearer: { type: 'http', scheme: 'bearer' } });
    const app = createServer({ store: t.store, token: TOKEN });
    const served = app.routes
      .filter((r) => r.path.startsWith('/api/') && r.method !== 'ALL' && r.path !== '/api/openapi.json')
      .map((r) => `${r.method} ${r.path.replace(/:([a-z]+)/g, '{$1}')}`);
    expect([...new Set(served)].sort()).toEqual(operations(doc).sort());
    for (const ops of Object.values(doc.paths))
      for (const op of Object.values(ops)) expect(op.security).toEqual([{ bearer: [] }]);
  });

  it('describes what each route really answers: status codes documented, bodies matching the schemas', async () => {
    const doc = (await (await t.api('/api/openapi.json')).json()) as Doc;
    const parked = await t.store.submit({ agent: 'support', input: 'Refund order O-1, 3 EUR.' });
    const other = await t.store.submit({ agent: 'support', input: 'Refund order O-2, 3 EUR.' });
    await waitForStatus(t.store, parked, 'awaiting_approval');
    await waitForStatus(t.store, other, 'awaiting_approval');
    const post = (body: unknown): RequestInit => ({ method: 'POST', body: JSON.stringify(body) });
    const text = (body: string): RequestInit => ({ method: 'POST', body, headers: { 'content-type': 'text/plain' } });
    // Every documented operation, with requests that reach its documented answers.
    const tries: Record<keyof typeof routes, [string, RequestInit][]> = {
      submit: [
        ['/api/turns', post({ agent: 'support', input: 'Where is my order O-3?' })],
        ['/api/turns', post({})],
        ['/api/turns', text('{"agent":"support"}')],
      ],
      list: [
        ['/api/turns?limit=2', {}],
        ['/api/turns?status=nope', {}],
      ],
      get: [
        [`/api/turns/${parked}`, {}],
        ['/api/turns/turn_none', {}],
      ],
      events: [['/api/turns/turn_none/events', {}]],
      decide: [
        [`/api/turns/${parked}/decisions`, post({ decisions: { call_9: { type: 'approve' } } })],
        [`/api/turns/${parked}/decisions`, text('{"decisions":{"call_1":{"type":"approve"}}}')],
        [`/api/turns/${parked}/decisions`, post({ decisions: { call_1: { type: 'approve' } } })],
      ],
      cancel: [
        [`/api/turns/${other}/cancel`, post({ reason: 'test' })],
        ['/api/turns/turn_none/cancel', post({})],
        [`/api/turns/${other}/cancel`, text('{}')],
      ],
      listThreads: [
        ['/api/threads?limit=2', {}],
        ['/api/threads?limit=0', {}],
      ],
      getThread: [
        ['/api/threads/customer-7', {}],
        ['/api/threads/thread_none', {}],
      ],
      threadEvents: [['/api/threads/thread_none/events', {}]],
      closeThread: [
        ['/api/threads/thread_none/close', post({})],
        ['/api/threads/customer-7/close', text('{}')],
        ['/api/threads/customer-7/close', post({ reason: 'done' })],
      ],
    };
    // A thread whose first turn has not ended: a second turn that refuses to wait is answered 409.
    await t.api('/api/turns', post({ agent: 'support', input: 'Refund order O-7, 3 EUR.', thread: 'customer-7' }));
    const busy = await t.api(
      '/api/turns',
      post({ agent: 'support', input: 'And O-8?', thread: 'customer-7', whenBusy: 'refuse' }),
    );
    expect(busy.status).toBe(409);
    expect(((await busy.json()) as { error: { code: string } }).error.code).toBe('thread_busy');
    expect(Object.keys(tries).sort()).toEqual(Object.keys(routes).sort());
    for (const [name, requests] of Object.entries(tries)) {
      const route = routes[name as keyof typeof routes];
      const documented = doc.paths[route.path]?.[route.method];
      expect(documented, `${route.method} ${route.path}`).toBeDefined();
      for (const [path, init] of requests) {
        const response = await t.api(path, init);
        const status = String(response.status);
        expect(Object.keys(documented?.responses ?? {}), `${path} answered ${status}`).toContain(status);
        const schema = (route.responses as Record<string, { content?: Record<string, { schema: unknown }> }>)[status]?.content?.[
          'application/json'
        ]?.schema as { safeParse(value: unknown): { success: boolean; error?: unknown } } | undefined;
        expect(schema, `${path} ${status} has a JSON schema`).toBeDefined();
        const parsed = schema?.safeParse(await response.json());
        expect(parsed?.success, `${path} ${status}: ${JSON.stringify(parsed?.error)}`).toBe(true);
      }
    }
    // A closed thread takes no more turns.
    const closed = await t.api('/api/turns', post({ agent: 'support', input: 'More?', thread: 'customer-7' }));
    expect(closed.status).toBe(409);
    expect(((await closed.json()) as { error: { code: string } }).error.code).toBe('thread_closed');
    // A body route documents 413 and 415; a GET route takes no body, so it documents neither.
    for (const route of Object.values(routes)) {
      const statuses = Object.keys(doc.paths[route.path]?.[route.method]?.responses ?? {});
      if (route.method === 'post') expect(statuses, route.path).toEqual(expect.arrayContaining(['413', '415']));
      else
        expect(
          statuses.filter((s) => s === '413' || s === '415'),
          route.path,
        ).toEqual([]);
    }
    // The parked calls' input that runs is in the turn's schema, next to the call as the model sent it.
    const turnSchema = (doc as unknown as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } })
      .components.schemas.StoredTurn;
    const parkedSchema = (turnSchema?.properties.parked as { items: { properties: Record<string, unknown> } } | undefined)?.items;
    expect(Object.keys(parkedSchema?.properties ?? {})).toEqual(['call', 'input', 'reason', 'expiresAfterMs', 'expiresAt']);
    // The event stream is the one answer that is not JSON.
    const stream = await t.api(`/api/turns/${other}/events`);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await stream.body?.cancel();
  });
});
