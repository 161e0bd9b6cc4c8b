import fc from 'fast-check';
import pg from 'pg';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonValue, Model } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import { createWorker, openStore } from '@turnkit/store';
import { createStore, openSql, type Sql, type SqlQuery } from '../src/internal.js';
import { LOG_ROWS } from '../src/sql/values.js';
import { dropSchema, POSTGRES_URL, scratchSchema } from './postgres.js';

/** Runs of the property over log entries (each a turn, a claim, a checkpoint and a read of the view). */
const ENTRY_RUNS = 25;

/** Answers with an `add` call per tool result so far, then 'done' (two calls, then the answer). */
const model: Model = {
  async generate(request) {
    const results = request.messages.filter((m) => m.role === 'tool').length;
    if (results === 2) return { text: 'done', toolCalls: [], finishReason: 'stop' };
    return { text: '', toolCalls: [{ id: `c${results}`, name: 'add', input: { a: results, b: 1 } }], finishReason: 'tool_calls' };
  },
};
const add = defineTool({
  name: 'add',
  description: 'Adds.',
  input: z.object({ a: z.number(), b: z.number() }),
  readOnly: true,
  execute: ({ a, b }) => a + b,
});

/** The connection, keeping the first words of every statement sent. */
function recording(sql: Sql, sent: string[]): Sql {
  const record =
    (target: SqlQuery): SqlQuery['query'] =>
    (text, params) => {
      sent.push(text.trim().replace(/\s+/g, ' '));
      return target.query(text, params);
    };
  return {
    kind: sql.kind,
    query: record(sql),
    transaction: (work) => sql.transaction((tx) => work({ query: record(tx) })),
    close: () => sql.close(),
  };
}

describe('the statements of a turn', () => {
  it('a turn with two tool calls takes seven statements and no transaction: claim 1, checkpoints 3 (two with a call start), results 2', async () => {
    const sql = await openSql('memory://');
    try {
      const sent: string[] = [];
      const store = createStore(recording(sql, sent));
      const id = await store.submit({ agent: 'a', input: 'add twice' });
      await createWorker({ store, agents: { a: { model, tools: [add] } } }).runUntilIdle();
      const turnStatements = sent.length;
      const turn = await store.get(id);
      expect(turn?.status).toBe('stopped');
      expect(turn?.toolCalls.map((c) => c.result?.output)).toEqual([1, 2]);
      // Nothing of the transcript is lost by the boundaries not written: each tool result rides on the next checkpoint.
      expect(turn?.transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
      const turnSent = sent.slice(0, turnStatements);
      const of = (start: string): number => turnSent.filter((s) => s.startsWith(start)).length;
      expect(of('WITH t AS (INSERT INTO turnkit_turns')).toBe(1); // submit
      expect(of('WITH caps AS')).toBe(2); // the claim, and the last one that finds nothing
      // Checkpoints, each with its log rows and inbox rows: \`dispatching\` twice, each written with
      // its call's start, and the end. The boundary after each batch is not written: the
      // \`dispatching\` state and the journal make it again.
      expect(of('WITH seen AS')).toBe(3);
      expect(of('WITH held AS')).toBe(2); // a result per call, fenced by itself
      // What the claim returned is not asked again, and a batch whose state is not written yet has no journal to read.
      expect(turnSent.filter((s) => /^SELECT .*FROM turnkit_(inbox|tool_results)/.test(s))).toEqual([]);
      expect(sent.slice(turnStatements).filter((s) => /^SELECT .*FROM turnkit_(inbox|tool_results)/.test(s))).toHaveLength(2); // store.get reads both
      expect(turnStatements).toBe(1 + 2 + 3 + 2 + 1); // and the worker's look for turns falling due
    } finally {
      await sql.close();
    }
  });
});

describe('the journal', () => {
  it('keeps a result without the call id and name its row has, and reads it back whole; a result named otherwise keeps its name', async () => {
    const sql = await openSql('memory://');
    try {
      const store = createStore(sql);
      const id = await store.submit({ agent: 'a', input: 'x' });
      const claim = await store.claim({ owner: 'w', leaseMs: 30_000 });
      if (claim === null) throw new Error('no claim');
      await store.callStarted(claim.lease, { id: 'c1', name: 'add' });
      await store.callFinished(claim.lease, { callId: 'c1', name: 'add', output: 2, isError: false });
      // Started as `add`, finished under another name: the row keeps the result whole.
      await store.callStarted(claim.lease, { id: 'c2', name: 'add' });
      await store.callFinished(claim.lease, { callId: 'c2', name: 'sum', output: 3, isError: false });
      // No start (a denied call): inserted with its result.
      await store.callFinished(claim.lease, { callId: 'c3', name: 'rm', output: 'denied', isError: true });
      // A plain text output that is not an error: kept as the text alone.
      await store.callFinished(claim.lease, { callId: 'c4', name: 'echo', output: 'hi', isError: false });
      const raw = await sql.query(
        `SELECT call_id, result::text AS result FROM turnkit_tool_results WHERE turn_seq = (SELECT seq FROM turnkit_turns WHERE id = $1) ORDER BY call_id`,
        [id],
      );
      expect(raw.map((r) => JSON.parse(String(r.result)))).toEqual([
        { output: 2, isError: false },
        { callId: 'c2', name: 'sum', output: 3, isError: false },
        { output: 'denied', isError: true },
        'hi',
      ]);
      const read = await store.journal(claim.lease, ['c1', 'c2', 'c3', 'c4']);
      expect(read.results.sort((a, b) => a.callId.localeCompare(b.callId))).toEqual([
        { callId: 'c1', name: 'add', output: 2, isError: false },
        { callId: 'c2', name: 'sum', output: 3, isError: false },
        { callId: 'c3', name: 'rm', output: 'denied', isError: true },
        { callId: 'c4', name: 'echo', output: 'hi', isError: false },
      ]);
      expect((await store.get(id))?.toolCalls.map((c) => c.result)).toEqual(read.results);
    } finally {
      await sql.close();
    }
  });
});

describe('log entries stored short (one PGlite for both)', () => {
  let sql: Sql;
  beforeAll(async () => {
    sql = await openSql('memory://');
  });
  afterAll(() => sql.close());

  it('the user message equal to the input and a tool result message equal to its journal row are logged as references and read back whole; one that differs is logged whole', async () => {
    const store = createStore(sql);
    const id = await store.submit({ agent: 'a', input: 'add twice' });
    await createWorker({ store, agents: { a: { model, tools: [add] } } }).runUntilIdle();
    const entries = async (turn: string) =>
      (
        await sql.query(
          `SELECT data::text AS data FROM ${LOG_ROWS} l WHERE turn_seq = (SELECT seq FROM turnkit_turns WHERE id = $1) ORDER BY seq`,
          [turn],
        )
      ).flatMap((r) => JSON.parse(String(r.data)) as unknown[][]);
    const kept = await entries(id);
    expect(kept[0]).toEqual(['u']);
    expect(kept.filter((e) => e[0] === 'r')).toEqual([
      ['r', 'c0'],
      ['r', 'c1'],
    ]);
    const turn = await store.get(id);
    expect(turn?.transcript[0]).toEqual({ role: 'user', content: 'add twice' });
    expect(turn?.transcript.filter((m) => m.role === 'tool')).toEqual([
      { role: 'tool', result: { callId: 'c0', name: 'add', output: 1, isError: false } },
      { role: 'tool', result: { callId: 'c1', name: 'add', output: 2, isError: false } },
    ]);
    const watched: unknown[] = [];
    for await (const event of store.watch(id))
      if (event.type === 'message' && event.message.role === 'tool') watched.push(event.message);
    expect(watched).toEqual(turn?.transcript.filter((m) => m.role === 'tool'));

    // Journaled under another name (the row keeps the result whole), a result differing from the
    // journal's, and a call with no journal row: the first a reference, the others whole.
    const other = await store.submit({ agent: 'a', input: 'x' });
    const claim = await store.claim({ owner: 'w', leaseMs: 30_000, turnIds: [other] });
    if (claim === null) throw new Error('no claim');
    await store.callFinished(claim.lease, { callId: 'k1', name: 'sum', output: 'ok', isError: false });
    await store.callFinished(claim.lease, { callId: 'k2', name: 'add', output: 'journaled', isError: false });
    const messages = [
      { role: 'user', content: 'not the input' },
      { role: 'tool', result: { callId: 'k1', name: 'sum', output: 'ok', isError: false } },
      { role: 'tool', result: { callId: 'k2', name: 'add', output: 'changed', isError: false } },
      { role: 'tool', result: { callId: 'k3', name: 'add', output: 'unjournaled', isError: true } },
    ] as const;
    await store.commit(claim.lease, { log: messages.map((message) => ({ message })) });
    expect((await entries(other)).map((e) => e[0])).toEqual(['m', 'r', 'm', 'm']);
    expect((await store.get(other))?.transcript).toEqual(messages);
  });

  it('a notice is kept as ["n", name, data], the turn\'s turn_started as ["t"], iteration as ["i", n], a reply as ["a", content, toolCalls] (["b", input] in the journal row of its one call), a status change as ["s", status(, outcome)]; the view reads them back as it reads entries written whole', async () => {
    const store = createStore(sql);
    const id = await store.submit({ agent: 'a', input: 'add twice' });
    await createWorker({ store, agents: { a: { model, tools: [add] } }, turnIds: [id] }).runUntilIdle();
    const [raw] = await sql.query(
      `SELECT json_agg(e.value ORDER BY l.seq, e.n)::text AS entries FROM ${LOG_ROWS} l CROSS JOIN LATERAL json_array_elements(l.data) WITH ORDINALITY e(value, n)
       WHERE l.turn_seq = (SELECT seq FROM turnkit_turns WHERE id = $1)`,
      [id],
    );
    const kept = JSON.parse(String(raw?.entries)) as unknown[][];
    expect(kept).toContainEqual(['t']);
    expect(kept).toContainEqual(['i', 1]);
    expect(kept).toContainEqual(['g', 1]);
    expect(kept.filter((e) => e[0] === 'a').length).toBeGreaterThan(0); // the model's replies
    // Each reply of one call without text, in the journal row of that call: ["b", input].
    expect(kept.filter((e) => e[0] === 'b')).toEqual([
      ['b', { a: 0, b: 1 }],
      ['b', { a: 1, b: 1 }],
    ]);
    expect(kept.filter((e) => e[0] === 'm')).toEqual([]);
    expect(kept).toContainEqual(['s', 'dispatching']);
    expect(kept.at(-1)).toEqual(['s', 'stopped', { status: 'stopped', stopReason: 'completed', output: 'done' }]);

    const view = async (turn: string) =>
      (await sql.query(`SELECT kind, data::text AS data FROM turnkit_log_entries WHERE turn_id = $1 ORDER BY seq`, [turn])).map(
        (r) => ({ kind: String(r.kind), data: JSON.parse(String(r.data)) as unknown }),
      );
    const read = await view(id);
    expect(read.filter((e) => e.kind === 'notice')[0]).toEqual({
      kind: 'notice',
      data: { name: 'turn_started', data: { id } },
    });
    expect(read.filter((e) => e.kind === 'status').map((e) => e.data)).toEqual([
      { status: 'dispatching', outcome: null },
      { status: 'stopped', outcome: { status: 'stopped', stopReason: 'completed', output: 'done' } },
    ]);
    // The same history written as schema version 7 wrote it (each entry [kind's letter, whole data]) reads back the same.
    const old = await store.submit({ agent: 'none', input: 'add twice' });
    const letter: Record<string, string> = { message: 'm', notice: 'n', status: 's' };
    const whole = read.map((e) =>
      e.kind === 'notice' && (e.data as { name?: unknown }).name === 'turn_started'
        ? { kind: 'notice', data: { name: 'turn_started', data: { id: old } } }
        : e,
    );
    await sql.query(
      `INSERT INTO turnkit_log (turn_seq, seq, kind, data, lease_token) SELECT seq, 1, 'entries', $2::json, 1 FROM turnkit_turns WHERE id = $1`,
      [old, JSON.stringify(whole.map((e) => [letter[e.kind], e.data]))],
    );
    expect(await view(old)).toEqual(whole);
  });

  it('a batch parked for approval shows every status it passed through, in order: its state before the batch is written with the parking write, and its status stays in the log', async () => {
    const store = createStore(sql);
    const id = await store.submit({ agent: 'a', input: 'add once' });
    const gated = defineTool({
      name: 'add',
      description: 'Adds, once a person approves.',
      input: z.object({ a: z.number(), b: z.number() }),
      needsApproval: true,
      execute: ({ a, b }) => a + b,
    });
    await createWorker({ store, agents: { a: { model, tools: [gated] } }, turnIds: [id] }).runUntilIdle();
    const statuses = (
      await sql.query(`SELECT data::text AS data FROM turnkit_log_entries WHERE turn_id = $1 AND kind = 'status' ORDER BY seq`, [
        id,
      ])
    ).map((r) => (JSON.parse(String(r.data)) as { status: string }).status);
    expect(statuses).toEqual(['dispatching', 'awaiting_approval']);
  });

  it(`a reply and an iteration or steering notice of any shape read back whole through the view, in a log row or in the journal row of a call started with them (fast-check, numRuns ${ENTRY_RUNS}, seed 9)`, async () => {
    const store = createStore(sql);
    // JSON as Postgres's json type and JSON.parse give it back (no -0).
    const json = fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(JSON.stringify(v)) as JsonValue);
    const call = fc.record({ id: fc.string({ minLength: 1 }), name: fc.string({ minLength: 1 }), input: json });
    const entry = fc.oneof(
      fc
        .record({ role: fc.constant('assistant'), content: fc.string(), toolCalls: fc.array(call, { maxLength: 2 }) })
        .map((message) => ({ message })),
      fc.record({ role: fc.constant('assistant'), content: fc.string() }).map((message) => ({ message })),
      fc
        .record({
          name: fc.constantFrom('iteration', 'steering', 'other'),
          data: fc.oneof(json, fc.dictionary(fc.constantFrom('iteration', 'round', 'x'), json, { maxKeys: 2 })),
        })
        .map((notice) => ({ notice })),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(entry, { minLength: 1, maxLength: 4 }), fc.nat({ max: 2 }), async (log, starting) => {
        const id = await store.submit({ agent: 'none', input: 'x' });
        const claim = await store.claim({ owner: 'w', leaseMs: 30_000, turnIds: [id] });
        if (claim === null) throw new Error('no claim');
        // 0: no call started; 1: the call of the first reply with calls (its row carries the entries,
        // the reply as ["b", ...] when it is that one call); 2: a call no reply made.
        const calls = log.flatMap((e) => ('message' in e && 'toolCalls' in e.message ? e.message.toolCalls : []));
        const start =
          starting === 0
            ? undefined
            : starting === 1 && calls[0] !== undefined
              ? calls[0]
              : { id: 'no reply made it', name: 'x' };
        await store.commit(claim.lease, {
          log: log as never,
          ...(start === undefined ? {} : { start: { id: start.id, name: start.name } }),
        });
        const read = await sql.query(`SELECT data::text AS data FROM turnkit_log_entries WHERE turn_id = $1 ORDER BY seq`, [id]);
        expect(read.map((r) => JSON.parse(String(r.data)))).toEqual(log.map((e) => ('message' in e ? e.message : e.notice)));
      }),
      { numRuns: ENTRY_RUNS, seed: 9 },
    );
  });
});

describe.skipIf(POSTGRES_URL === undefined)('checkpoints racing a cancel on Postgres', () => {
  const schema = scratchSchema('checkpoint');
  afterAll(() => dropSchema(schema));

  it('a cancel committed while the final checkpoint waits for the turn row is closed by it, not left pending', async () => {
    const store = await openStore(POSTGRES_URL, { schema });
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 2, options: `-c search_path=${schema}` });
    try {
      const id = await store.submit({ agent: 'a', input: 'x' });
      const claim = await store.claim({ owner: 'w', leaseMs: 30_000 });
      expect(claim?.lease.id).toBe(id);
      // Another session does what store.cancel does: locks the turn's row, adds the cancel, marks it runnable.
      const other = await pool.connect();
      await other.query('BEGIN');
      await other.query('SELECT 1 FROM turnkit_turns WHERE id = $1 FOR UPDATE', [id]);
      const ending = store.commit(claim!.lease, { fail: { kind: 'internal_error', message: 'ended' }, release: true });
      // The checkpoint has taken its snapshot and waits for the row.
      for (let waiting = false; !waiting; ) {
        const { rows } = await pool.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%WITH seen AS%'`,
        );
        waiting = Number(rows[0]?.n) > 0;
      }
      await other.query(`INSERT INTO turnkit_inbox (turn_id, kind, body) VALUES ($1, 'cancel', '{"reason":"late"}')`, [id]);
      await other.query('UPDATE turnkit_turns SET runnable = true WHERE id = $1', [id]);
      await other.query('COMMIT');
      other.release();
      await ending;
      const turn = await store.get(id);
      expect(turn?.status).toBe('failed');
      expect(turn?.decisions).toEqual([expect.objectContaining({ kind: 'cancel', status: 'ignored' })]);
      const { rows } = await pool.query('SELECT runnable FROM turnkit_turns WHERE id = $1', [id]);
      expect(rows[0]?.runnable).toBe(false);
    } finally {
      await pool.end();
      await store.close();
    }
  });
});
