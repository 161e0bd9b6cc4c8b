import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../src/api.js';
import { createServer } from '../src/server.js';
import { readSse, startServer, type TestServer, TOKEN, waitForStatus } from './helpers.js';
import { CLIENT, casts } from './typed-client.js';

// Inside the package, so the generated client resolves `openapi-fetch` as a user's would.
const ARTIFACTS = fileURLToPath(new URL('../test-artifacts/', import.meta.url));

let t: TestServer;
let dir: string | undefined;
beforeAll(async () => {
  t = await startServer();
  await mkdir(ARTIFACTS, { recursive: true });
  dir = await mkdtemp(join(ARTIFACTS, 'typed-client-'));
});
afterAll(async () => {
  await t.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

interface Doc {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      { operationId?: string; responses: Record<string, { content?: Record<string, unknown> }>; security?: unknown[] }
    >
  >;
  components: { securitySchemes: Record<string, unknown> };
}

/**
 * Checks a reply against the description with ajv (JSON Schema 2020-12, OpenAPI 3.1's dialect):
 * null when it matches, else what is wrong (the status or media type undocumented, or the errors).
 */
function documentCheck(doc: Doc) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(doc, 'openapi.json');
  const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
  return (path: string, method: string, status: number, type: string, body: unknown): string | null => {
    if (doc.paths[path]?.[method]?.responses[String(status)]?.content?.[type] === undefined)
      return `${method} ${path} ${status} ${type} is not documented`;
    const validate = ajv.getSchema(
      `openapi.json#/${pointer('paths', path, method, 'responses', String(status), 'content', type, 'schema')}`,
    );
    if (validate === undefined) return `${method} ${path} ${status}: no schema`;
    return validate(body) ? null : `${method} ${path} ${status}: ${JSON.stringify(validate.errors)}`;
  };
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

  it('describes what each route really answers: status codes documented, bodies matching the zod schemas and the document (ajv)', async () => {
    const doc = (await (await t.api('/api/openapi.json')).json()) as Doc;
    const check = documentCheck(doc);
    const parked = await t.store.submit({ agent: 'support', input: 'Refund order O-1, 3 EUR.' });
    const other = await t.store.submit({ agent: 'support', input: 'Refund order O-2, 3 EUR.' });
    // A turn of many agents parked in its child turn: its reply carries the agent path and the child turn.
    const tree = await t.store.submit({ agent: 'desk', input: 'Refund order O-4, 3 EUR.' });
    await waitForStatus(t.store, parked, 'awaiting_approval');
    await waitForStatus(t.store, other, 'awaiting_approval');
    await waitForStatus(t.store, tree, 'awaiting_approval');
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
        [`/api/turns/${tree}`, {}],
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
        const body = await response.json();
        expect(check(route.path, route.method, response.status, 'application/json', body)).toBe(null);
        const parsed = schema?.safeParse(body);
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
    const schemas = (doc as unknown as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } })
      .components.schemas;
    expect(schemas.StoredTurn?.properties.parked).toEqual({ type: 'array', items: { $ref: '#/components/schemas/ParkedCall' } });
    expect(Object.keys(schemas.ParkedCall?.properties ?? {})).toEqual([
      'call',
      'input',
      'reason',
      'expiresAfterMs',
      'expiresAt',
      'agentPath',
    ]);
    // The event stream is the one answer that is not JSON.
    const stream = await t.api(`/api/turns/${other}/events`);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await stream.body?.cancel();
  });

  it('a client generated with openapi-typescript and openapi-fetch type-checks strict with no cast; every reply and stream event it gets matches the description', async () => {
    const doc = (await (await t.api('/api/openapi.json')).json()) as Doc;
    const operations = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
    expect(operations.every((id) => typeof id === 'string')).toBe(true);
    expect(new Set(operations).size).toBe(operations.length);

    await writeFile(
      join(dir ?? ARTIFACTS, 'api.ts'),
      astToString(await openapiTS(doc as unknown as Parameters<typeof openapiTS>[0])),
    );
    const clientFile = join(dir ?? ARTIFACTS, 'client.ts');
    await writeFile(clientFile, CLIENT);
    const program = ts.createProgram([clientFile], {
      strict: true,
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes: true,
      verbatimModuleSyntax: true,
      isolatedModules: true,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2023.d.ts'],
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: ['node'],
      noEmit: true,
      skipLibCheck: true,
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    expect(problems).toEqual([]);
    const source = program.getSourceFile(clientFile);
    expect(source).toBeDefined();
    if (source !== undefined) expect(casts(source)).toEqual([]);

    // The same program, run against the server.
    const { exercise } = (await import(clientFile)) as {
      exercise(
        url: string,
        token: string,
      ): Promise<{
        replies: { operation: string; status: number; body: unknown }[];
        summary: string[];
        turn: string;
      }>;
    };
    const { replies, summary, turn } = await exercise(t.url, TOKEN);
    expect(summary).toEqual([
      'parked refund {"order":"O-1","amount":3,"currency":"EUR"}',
      'batch parked 1',
      'accepted call_1',
      'outcome completed "Done: refunded 3 EUR for O-1."',
      'user Refund order O-1, 3 EUR.',
      'assistant calls refund',
      'tool refund false',
      'assistant calls ',
      'decision decision approve applied',
      'journal refund false',
      'model calls 2',
      'missing not_found',
      'thread turns 1 grants 0',
    ]);

    const check = documentCheck(doc);
    const byOperation = new Map(
      Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.entries(ops).map(([method, op]) => [op.operationId ?? '', { path, method }] as const),
      ),
    );
    const validate = (operation: string, status: number, type: string, body: unknown): void => {
      const found = byOperation.get(operation);
      expect(found, operation).toBeDefined();
      if (found !== undefined) expect(check(found.path, found.method, status, type, body), operation).toBe(null);
    };
    for (const reply of replies) {
      if (reply.operation !== 'streamTurn' && reply.operation !== 'streamThread') {
        validate(reply.operation, reply.status, 'application/json', reply.body);
        continue;
      }
      expect(reply.status).toBe(200);
      const events = await readSse(new Response(String(reply.body)));
      expect(events.map((e) => e.event)).toContain('status');
      expect(events.at(-1)?.event).toBe('end');
      for (const event of events)
        validate(reply.operation, 200, 'text/event-stream', {
          event: event.event,
          ...(event.id === undefined ? {} : { id: event.id }),
          data: JSON.parse(event.data),
        });
    }
    expect(new Set(replies.map((r) => r.operation))).toEqual(new Set(byOperation.keys()));
    expect(turn).toMatch(/^turn_/);
  });
});
