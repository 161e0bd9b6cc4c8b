// What the API and the console answer when the store refuses a decision (no such turn, a turn not
// waiting, a call it has not parked, a call decided already): the store's refusal, mapped to 404 or
// 409. No worker runs in the background here, so a decision stays pending until the test runs one.

import type { Model } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import { createWorker, openStore, type Store } from '@turnkit/store';
import { openSql } from '@turnkit/store/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type RunningServer, serve } from '../src/index.js';
import { consoleSession, TOKEN } from './helpers.js';

const POSTGRES_URL = process.env.TURNKIT_TEST_POSTGRES_URL || undefined;

/** Asks for `pay` call_1 and call_2 (both need approval), then answers. */
const model: Model = {
  async generate(request) {
    if (request.messages.at(-1)?.role === 'tool') return { text: 'paid', toolCalls: [] };
    return {
      text: '',
      toolCalls: [
        { id: 'call_1', name: 'pay', input: { n: 1 } },
        { id: 'call_2', name: 'pay', input: { n: 2 } },
      ],
    };
  },
};
const pay = defineTool({
  name: 'pay',
  description: 'Pays.',
  input: z.object({ n: z.number() }),
  needsApproval: true,
  execute: ({ n }) => `paid ${n}`,
});
const agents = { payer: { model, tools: [pay] } };

const schema = `turnkit_test_server_decide_${process.pid}_${Date.now().toString(36)}`;
const targets = [
  { name: 'PGlite (memory://)', open: () => openStore('memory://'), skip: false },
  { name: 'Postgres', open: () => openStore(POSTGRES_URL ?? '', { schema }), skip: POSTGRES_URL === undefined },
];
afterAll(async () => {
  if (POSTGRES_URL === undefined) return;
  const sql = await openSql(POSTGRES_URL);
  try {
    await sql.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await sql.close();
  }
});

describe.each(targets)('refused decisions on $name', ({ open, skip }) => {
  let store: Store;
  let server: RunningServer;
  beforeAll(async () => {
    if (skip) return;
    store = await open();
    server = await serve({ store, token: TOKEN });
  });
  afterAll(async () => {
    await server?.close();
    await store?.close();
  });

  /** A turn parked on call_1 and call_2. */
  async function parked(): Promise<string> {
    const id = await store.submit({ agent: 'payer', input: 'pay twice' });
    await createWorker({ store, agents }).runUntilIdle();
    expect((await store.get(id))?.parked.map((p) => p.call.id)).toEqual(['call_1', 'call_2']);
    return id;
  }
  const post = async (id: string, decisions: Record<string, unknown>) => {
    const response = await fetch(`${server.url}/api/turns/${id}/decisions`, {
      method: 'POST',
      body: JSON.stringify({ decisions }),
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    });
    return { status: response.status, body: (await response.json()) as unknown };
  };

  it.skipIf(skip)('the API answers 404 or 409 with the store’s reason, and stores nothing of a refused request', async () => {
    expect(await post('turn_nope', { call_1: { type: 'approve' } })).toEqual({
      status: 404,
      body: { error: { code: 'not_found', message: "There is no turn 'turn_nope'; list turns with GET /api/turns." } },
    });
    const id = await parked();
    expect(await post(id, { call_1: { type: 'approve' }, call_9: { type: 'approve' } })).toEqual({
      status: 409,
      body: {
        error: {
          code: 'unknown_call',
          message: `Turn '${id}' has no parked call 'call_9'; its calls waiting for a decision are 'call_1', 'call_2'. Nothing of this request was stored; send decisions for waiting calls only.`,
          field: 'body.decisions',
        },
      },
    });
    expect((await store.get(id))?.decisions).toEqual([]);
    expect(await post(id, { call_1: { type: 'approve' } })).toEqual({ status: 200, body: { accepted: ['call_1'], ignored: [] } });
    // A second decision for call_1, beside a first one for call_2: refused whole, call_2 still waits.
    expect(await post(id, { call_2: { type: 'approve' }, call_1: { type: 'reject' } })).toEqual({
      status: 409,
      body: {
        error: {
          code: 'already_decided',
          message: `Call 'call_1' of turn '${id}' has a decision already, and the first decision per call stands; nothing of this request was stored, so send any other decisions again without it.`,
          field: 'body.decisions',
        },
      },
    });
    expect((await store.get(id))?.parked.map((p) => p.call.id)).toEqual(['call_2']);
    expect(await post(id, { call_2: { type: 'reject' } })).toEqual({ status: 200, body: { accepted: ['call_2'], ignored: [] } });
    await createWorker({ store, agents }).runUntilIdle();
    expect((await store.get(id))?.status).toBe('stopped');
    expect(await post(id, { call_2: { type: 'approve' } })).toEqual({
      status: 409,
      body: {
        error: {
          code: 'not_waiting',
          message: `Turn '${id}' is not waiting for approval (its status is stopped); only a turn in status awaiting_approval takes decisions.`,
        },
      },
    });
  });

  it.skipIf(skip)('the console answers with the store’s reason: 404 for no turn, 409 for a decision it refused', async () => {
    const own = await consoleSession(server.url);
    const decide = async (id: string, call: string) => {
      const response = await fetch(`${server.url}/console/turns/${id}/decide`, {
        method: 'POST',
        body: new URLSearchParams({ csrf: own.csrf, call, action: 'approve' }),
        headers: { cookie: own.cookie, origin: server.url },
        redirect: 'manual',
      });
      const text = await response.text();
      return { status: response.status, text: /role="alert">([^<]*)</.exec(text)?.[1] ?? text };
    };
    const esc = (s: string) => s.replace(/'/g, '&#39;');
    expect(await decide('turn_nope', 'call_1')).toMatchObject({ status: 404 });
    expect((await decide('turn_nope', 'call_1')).text).toContain(esc("There is no turn 'turn_nope'."));
    const id = await parked();
    const unknown = await decide(id, 'call_9');
    expect(unknown.status).toBe(409);
    expect(unknown.text).toContain(
      esc(`Turn '${id}' has no parked call 'call_9'; reload the page to see the calls waiting for a decision.`),
    );
    expect((await decide(id, 'call_1')).status).toBe(303);
    const again = await decide(id, 'call_1');
    expect(again.status).toBe(409);
    expect(again.text).toContain(
      esc(`Call 'call_1' of turn '${id}' already has a decision in the store, so this one was not taken`),
    );
    expect((await decide(id, 'call_2')).status).toBe(303);
    await createWorker({ store, agents }).runUntilIdle();
    const late = await decide(id, 'call_2');
    expect(late.status).toBe(409);
    expect(late.text).toContain(
      esc(`Turn '${id}' is not waiting for approval (its status is stopped); reload the page to see where it is.`),
    );
  });
});
