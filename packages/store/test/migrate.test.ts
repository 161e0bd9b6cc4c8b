import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { createTurn, step, type Message, type Notice } from '@turnkit/core';
import { createWorker, type WatchEvent } from '@turnkit/store';
import { createStore, openSql } from '../src/internal.js';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';
import { defineTool } from '@turnkit/dispatch';
import { z } from 'zod';
import { LIMITS_BASE, STATE_BASES, toLean } from '../src/sql/lean.js';
import { MIGRATIONS, SCHEMA_VERSION } from '../src/schema/migrations.js';
import { readTemplate, templateFile } from '../src/db/pglite-template.js';

const dir = mkdtempSync(join(tmpdir(), 'turnkit-migrate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A new PGlite cluster in `data` (a directory that does not exist yet), with no store schema: from
 * the copy of a fresh cluster a new store starts from (src/db/pglite-template.ts), which the first
 * new store of the machine makes; initdb is most of the cost of a new cluster.
 */
async function newCluster(data: string): Promise<PGlite> {
  const file = templateFile();
  if (file !== null && readTemplate(file) === null) await (await openSql(join(dir, 'first-store'))).close();
  const template = file === null ? null : readTemplate(file);
  return template === null ? new PGlite(data) : new PGlite(data, { loadDataDir: template });
}

/** A database at schema version 2 holding turn 'old' mid-way, written as that version wrote it. */
async function versionTwoStore(data: string): Promise<void> {
  const db = await newCluster(data);
  for (const [i, migration] of MIGRATIONS.slice(0, 2).entries()) {
    for (const statement of migration.split(/;\s*\n/)) if (statement.trim() !== '') await db.query(statement);
    await db.query(
      'CREATE TABLE IF NOT EXISTS turnkit_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    await db.query('INSERT INTO turnkit_schema (version) VALUES ($1)', [i + 1]);
  }
  const [state, effects] = step(createTurn({ id: 'old', limits: { maxIterations: 7 } }), { type: 'start', input: 'hello' });
  const rows: { kind: string; data: Message | Notice | object }[] = [];
  for (const effect of effects) {
    if (effect.type === 'append') rows.push({ kind: 'message', data: effect.message });
    if (effect.type === 'emit') rows.push({ kind: 'notice', data: effect.notice });
  }
  rows.push({ kind: 'status', data: { status: state.status, outcome: null } });
  await db.query(
    `INSERT INTO turnkit_turns (id, agent, input, status, state, version, log_seq) VALUES ('old', 'a', 'hello', $1, $2::jsonb, 1, $3)`,
    [state.status, JSON.stringify(state), rows.length],
  );
  for (const [i, row] of rows.entries()) {
    await db.query('INSERT INTO turnkit_log (turn_id, seq, kind, data, lease_token) VALUES ($1, $2, $3, $4::jsonb, 1)', [
      'old',
      i + 1,
      row.kind,
      JSON.stringify(row.data),
    ]);
  }
  await db.close();
}

describe('schema migrations', () => {
  it('a store written by schema version 2 opens at the current version and its turn in flight runs on, state and log intact', async () => {
    const data = join(dir, 'v2');
    await versionTwoStore(data);
    const sql = await openSql(data);
    try {
      const [version] = await sql.query('SELECT max(version)::int AS v FROM turnkit_schema');
      expect(version?.v).toBe(SCHEMA_VERSION);
      expect(SCHEMA_VERSION).toBe(12);
      const store = createStore(sql);
      const before = await store.get('old');
      expect(before?.state?.limits.maxIterations).toBe(7);
      expect(before?.transcript).toEqual([{ role: 'user', content: 'hello' }]);

      await createWorker({ store, agents: { a: { model: scriptedModel([text('done')]) } } }).runUntilIdle();
      const after = await store.get('old');
      expect(after?.status).toBe('stopped');
      expect(after?.state?.id).toBe('old');
      expect(after?.state?.limits.maxIterations).toBe(7);
      expect(after?.transcript.map((m) => m.role)).toEqual(['user', 'assistant']);

      // Old rows (one per entry) and the new one (the checkpoint's entries) read as one history.
      const events: WatchEvent[] = [];
      for await (const event of store.watch('old')) events.push(event);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      expect(events.at(-1)).toMatchObject({ type: 'status', status: 'stopped' });
      const kinds = await sql.query(
        `SELECT kind FROM turnkit_log WHERE turn_seq = (SELECT seq FROM turnkit_turns WHERE id = 'old') ORDER BY seq`,
      );
      expect(kinds.at(-1)?.kind).toBe('entries');

      // A new checkpoint stores the state without its id (the row's), its limits as its last key.
      const [raw] = await sql.query(`SELECT state::text AS state, state_limits FROM turnkit_turns WHERE id = 'old'`);
      const stored = JSON.parse(String(raw?.state)) as Record<string, unknown>;
      expect(stored.id).toBeUndefined();
      expect(stored.limits).toEqual({ '~': 1, maxIterations: 7 }); // lean: only what differs from the defaults
      expect(Object.keys(stored).at(-1)).toBe('limits');
      expect(raw?.state_limits).toBeNull();
      expect(stored['~']).toBe(4); // written against the base of a version 5 state (the current one), its keys short
      expect(stored.round).toBeUndefined(); // a fresh turn's value is left out
      // The new checkpoint's entries are [kind's letter, data] pairs; the view spells the kinds out.
      const [entries] = await sql.query(
        `SELECT data::text AS data FROM turnkit_log WHERE turn_seq = (SELECT seq FROM turnkit_turns WHERE id = 'old') ORDER BY seq DESC LIMIT 1`,
      );
      expect((JSON.parse(String(entries?.data)) as unknown[][]).map((e) => e[0])).toEqual(['a', 's']); // the answer, then the status
      // The turn's row was rebuilt with its columns in the order they change, the state last.
      const columns = await sql.query(
        `SELECT column_name FROM information_schema.columns WHERE table_name = 'turnkit_turns' AND table_schema = current_schema() ORDER BY ordinal_position`,
      );
      expect(columns.map((c) => c.column_name).slice(-3)).toEqual(['budget_usage', 'state_limits', 'state']);
    } finally {
      await sql.close();
    }
  });

  it("a store written by schema version 8 reads its turn's entries back the same at the current version, and the turn runs on", async () => {
    const data = join(dir, 'v8');
    const db = await newCluster(data);
    await db.query(
      'CREATE TABLE IF NOT EXISTS turnkit_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    for (const [i, migration] of MIGRATIONS.slice(0, 8).entries()) {
      await db.exec(migration);
      await db.query('INSERT INTO turnkit_schema (version) VALUES ($1)', [i + 1]);
    }
    // Turn 'v8' after its first reply (a call to `add`), its entries as version 8 wrote them.
    const reply = { role: 'assistant', content: '', toolCalls: [{ id: 'c0', name: 'add', input: { a: 1 } }] };
    const entries = [
      ['u'],
      ['t'],
      ['n', 'iteration', { iteration: 1 }],
      ['m', reply],
      ['n', 'steering', { round: 1 }],
      ['s', 'dispatching'],
    ];
    const [state] = step(createTurn({ id: 'v8', limits: { maxIterations: 7 } }), { type: 'start', input: 'hello' });
    await db.query(
      `INSERT INTO turnkit_turns (id, agent, input, status, state, version, log_seq) VALUES ('v8', 'a', 'hello', $1, $2::json, 1, $3)`,
      [state.status, JSON.stringify(state), entries.length],
    );
    await db.query(
      `INSERT INTO turnkit_log (turn_seq, seq, kind, data, lease_token) SELECT seq, 1, 'entries', $1::json, 1 FROM turnkit_turns WHERE id = 'v8'`,
      [JSON.stringify(entries)],
    );
    const view = `SELECT seq, kind, data::text AS data FROM turnkit_log_entries WHERE turn_id = 'v8' ORDER BY seq`;
    const read = (rows: readonly Record<string, unknown>[]) => rows.map((r) => ({ ...r, data: JSON.parse(String(r.data)) }));
    const before = read((await db.query<Record<string, unknown>>(view)).rows);
    await db.close();
    expect(before.map((e) => e.data)).toEqual([
      { role: 'user', content: 'hello' },
      { name: 'turn_started', data: { id: 'v8' } },
      { name: 'iteration', data: { iteration: 1 } },
      reply,
      { name: 'steering', data: { round: 1 } },
      { status: 'dispatching', outcome: null },
    ]);

    const sql = await openSql(data);
    try {
      expect((await sql.query('SELECT max(version)::int AS v FROM turnkit_schema'))[0]?.v).toBe(SCHEMA_VERSION);
      expect(read(await sql.query(view))).toEqual(before);
      const store = createStore(sql);
      await createWorker({ store, agents: { a: { model: scriptedModel([text('done')]) } } }).runUntilIdle();
      const after = await store.get('v8');
      expect(after?.status).toBe('stopped');
      expect(after?.transcript).toEqual([
        { role: 'user', content: 'hello' },
        reply,
        { role: 'assistant', content: 'done', toolCalls: [] },
      ]);
      // The answer is kept as ["a", content, toolCalls] and read back whole.
      const [last] = await sql.query(
        `SELECT data::text AS data FROM turnkit_log WHERE turn_seq = (SELECT seq FROM turnkit_turns WHERE id = 'v8') ORDER BY seq DESC LIMIT 1`,
      );
      expect((JSON.parse(String(last?.data)) as unknown[][])[0]).toEqual(['a', 'done', []]);
    } finally {
      await sql.close();
    }
  });

  it("a store written by schema version 9 (limits in state_limits, entries in log rows) runs its turn on; a round keeps its entries in its call's journal row", async () => {
    const data = join(dir, 'v9');
    const db = await newCluster(data);
    await db.query(
      'CREATE TABLE IF NOT EXISTS turnkit_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    for (const [i, migration] of MIGRATIONS.slice(0, 9).entries()) {
      await db.exec(migration);
      await db.query('INSERT INTO turnkit_schema (version) VALUES ($1)', [i + 1]);
    }
    // Turn 'v9' after its start, as version 9 stored it: the lean state with its mark first, the
    // limits in state_limits, the entries in a log row.
    const [state] = step(createTurn({ id: 'v9', limits: { maxIterations: 7 } }), { type: 'start', input: 'hello' });
    const { id: _id, limits, ...rest } = state;
    await db.query(
      `INSERT INTO turnkit_turns (id, agent, input, status, state, state_limits, version, log_seq) VALUES ('v9', 'a', 'hello', $1, $2::json, $3::json, 1, 2)`,
      [state.status, JSON.stringify(toLean(rest, STATE_BASES)), JSON.stringify(toLean({ ...limits }, LIMITS_BASE))],
    );
    await db.query(
      `INSERT INTO turnkit_log (turn_seq, seq, kind, data, lease_token) SELECT seq, 1, 'entries', '[["u"],["t"]]', 1 FROM turnkit_turns WHERE id = 'v9'`,
    );
    await db.close();

    const sql = await openSql(data);
    try {
      expect((await sql.query('SELECT max(version)::int AS v FROM turnkit_schema'))[0]?.v).toBe(SCHEMA_VERSION);
      const store = createStore(sql);
      expect((await store.get('v9'))?.transcript).toEqual([{ role: 'user', content: 'hello' }]);
      const add = defineTool({
        name: 'add',
        description: 'add',
        input: z.object({ a: z.number() }),
        readOnly: true,
        execute: ({ a }) => `${a + 1}`,
      });
      const model = scriptedModel([toolCalls(call('add', { a: 1 }, { id: 'c0' })), text('done')]);
      await createWorker({ store, agents: { a: { model, tools: [add] } } }).runUntilIdle();
      const after = await store.get('v9');
      expect(after?.status).toBe('stopped');
      // The limits read from state_limits held: the turn ran with maxIterations 7 and keeps them.
      expect(after?.state?.limits.maxIterations).toBe(7);
      expect(after?.transcript).toEqual([
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c0', name: 'add', input: { a: 1 } }] },
        { role: 'tool', result: { callId: 'c0', name: 'add', output: '2', isError: false } },
        { role: 'assistant', content: 'done', toolCalls: [] },
      ]);
      // The round's entries (the reply and its notices) are in c0's journal row, not a log row of their own.
      const [row] = await sql.query(
        `SELECT log_seq, log::text AS log FROM turnkit_tool_results WHERE turn_seq = (SELECT seq FROM turnkit_turns WHERE id = 'v9') AND call_id = 'c0'`,
      );
      expect(row?.log_seq).toBe(3);
      // The reply that made the call as ["b", input]: its id and name are the row's.
      expect(JSON.parse(String(row?.log))).toContainEqual(['b', { a: 1 }]);
      // Its text output is kept as the text alone, and the tool message as a reference to it.
      const [result] = await sql.query(`SELECT result::text AS result FROM turnkit_tool_results WHERE call_id = 'c0'`);
      expect(result?.result).toBe('"2"');
      const [last] = await sql.query(`SELECT data::text AS data FROM turnkit_log ORDER BY seq DESC LIMIT 1`);
      expect(JSON.parse(String(last?.data))).toContainEqual(['r', 'c0']);
      const seqs = await sql.query(`SELECT seq FROM turnkit_log_entries WHERE turn_id = 'v9' ORDER BY seq`);
      expect(seqs.map((r) => Number(r.seq))).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    } finally {
      await sql.close();
    }
  });
});
