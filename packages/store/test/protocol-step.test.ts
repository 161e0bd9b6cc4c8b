// The protocol function on its own: properties of `protocolStep` over generated event sequences,
// the claim statement against `claimable` on the same rows (PGlite), and the function's imports.

import { readFileSync } from 'node:fs';
import { createStore, openSql } from '../src/internal.js';
import {
  claimable,
  claimLimit,
  openHold,
  protocolStep,
  type Hold,
  type ProtocolEffect,
  type ProtocolEvent,
} from '@turnkit/store/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { testLog } from '../../../test-log.ts';

const rowId = fc.constantFrom('1', '2', '3', '4');
const callId = fc.constantFrom('a', 'b', 'c');
const inboxRow = fc.record({
  id: rowId,
  kind: fc.constantFrom('decision' as const, 'cancel' as const),
  callId: fc.option(callId, { nil: null }),
});

const event: fc.Arbitrary<ProtocolEvent> = fc.oneof(
  fc.record({
    type: fc.constant('inbox_read' as const),
    rows: fc.uniqueArray(inboxRow, { selector: (r) => r.id }),
    parked: fc.boolean(),
  }),
  fc.record({
    type: fc.constant('journal_read' as const),
    calls: fc.uniqueArray(fc.record({ id: callId, idempotent: fc.boolean() }), { selector: (c) => c.id }),
    results: fc.subarray(['a', 'b', 'c']),
    started: fc.subarray(['a', 'b', 'c']),
  }),
  fc.record({ type: fc.constant('call_starting' as const), callId }),
  fc.record({ type: fc.constant('start_journaled' as const), callId }),
  fc.record({ type: fc.constant('tool_finished' as const), callId }),
  fc.record({
    type: fc.constant('write' as const),
    terminal: fc.boolean(),
    release: fc.boolean(),
    derivable: fc.boolean(),
    batch: fc.boolean(),
  }),
  fc.record({ type: fc.constant('committed' as const), applied: fc.subarray(['1', '2', '3', '4']) }),
  fc.record({
    type: fc.constant('lost' as const),
    reason: fc.constantFrom('fenced_out' as const, 'database' as const, 'handed_back' as const, 'retry' as const),
  }),
  fc.record({ type: fc.constant('drive_ended' as const), terminal: fc.boolean() }),
);

/** Effects that act for the turn (write, run, take): none may follow a lost hold. */
const ACTING: ReadonlySet<ProtocolEffect['type']> = new Set([
  'commit',
  'commit_with_start',
  'write_deferred',
  'defer_write',
  'journal_start',
  'run_tool',
  'write_result',
  'write_interrupted',
  'run_call',
  'apply_decisions',
  'take_cancel',
]);

function run(events: readonly ProtocolEvent[]): {
  hold: Hold;
  steps: { event: ProtocolEvent; before: Hold; effects: ProtocolEffect[] }[];
} {
  let hold = openHold('t', 7);
  const steps = [];
  for (const e of events) {
    const before = hold;
    const [next, effects] = protocolStep(hold, e);
    steps.push({ event: e, before, effects });
    hold = next;
  }
  return { hold, steps };
}

const NUM_RUNS = 500;

describe('protocolStep (fast-check, numRuns 500, 1–40 events each)', () => {
  const events = fc.array(event, { minLength: 1, maxLength: 40 });

  it('acts for the turn only while it holds it: once lost, no write, run or take', () => {
    fc.assert(
      fc.property(events, (list) => {
        for (const { before, effects } of run(list).steps) {
          if (before.lost === null) continue;
          expect(effects.filter((e) => ACTING.has(e.type))).toEqual([]);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('skips a write only for a derivable state that nothing taken or deferred rides on, defers a batch state, and otherwise commits or stops', () => {
    fc.assert(
      fc.property(events, (list) => {
        for (const { event: e, before, effects } of run(list).steps) {
          if (e.type !== 'write') continue;
          const skipped = effects.some((x) => x.type === 'skip_write');
          const live = before.lost === null && !e.terminal && !e.release;
          const expected = live && e.derivable === true && before.unwritten.length === 0 && !before.deferred;
          expect(skipped).toBe(expected);
          expect(effects.length).toBe(1);
          if (skipped) continue;
          const deferred = live && e.batch === true;
          expect(effects[0]?.type).toBe(before.lost !== null ? 'stop' : deferred ? 'defer_write' : 'commit');
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('never journals a call while a state is deferred: its first start carries the state, any other journal write follows it', () => {
    fc.assert(
      fc.property(events, (list) => {
        let deferred = false;
        for (const { event: e, effects } of run(list).steps) {
          if (e.type === 'write' && effects.some((x) => x.type === 'defer_write')) deferred = true;
          for (const effect of effects) {
            if (effect.type === 'commit' || effect.type === 'commit_with_start' || effect.type === 'write_deferred')
              deferred = false;
            if (effect.type === 'journal_start' || effect.type === 'write_result' || effect.type === 'write_interrupted')
              expect(deferred, effect.type).toBe(false);
          }
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('fences every write on the claim token', () => {
    fc.assert(
      fc.property(events, (list) => {
        for (const { effects } of run(list).steps) for (const e of effects) if ('token' in e) expect(e.token).toBe(7);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('takes an inbox row at most once, and a committed row never rides on a later commit', () => {
    fc.assert(
      fc.property(events, (list) => {
        const taken: string[] = [];
        const committed = new Set<string>();
        let asked: readonly string[] = [];
        for (const { event: e, effects } of run(list).steps) {
          // A commit lands with the rows the last commit effect carried (others are not a real store's answer).
          if (e.type === 'committed') for (const id of e.applied.filter((x) => asked.includes(x))) committed.add(id);
          for (const effect of effects) {
            if (effect.type === 'apply_decisions') taken.push(...effect.rows);
            if (effect.type === 'take_cancel') taken.push(effect.row);
            if (effect.type !== 'commit') continue;
            for (const id of effect.applied) expect(committed.has(id), id).toBe(false);
            asked = effect.applied;
          }
        }
        expect(new Set(taken).size).toBe(taken.length);
      }),
      {
        numRuns: NUM_RUNS,
        // Found by a run: a cancel closed by a terminal commit must not ride on a second terminal write.
        examples: [
          [
            [
              { type: 'inbox_read', rows: [{ id: '1', kind: 'cancel', callId: null }], parked: false },
              { type: 'write', terminal: true, release: false },
              { type: 'committed', applied: ['1'] },
              { type: 'write', terminal: true, release: false },
            ],
          ],
        ],
      },
    );
  });

  it('never runs a call whose result is journaled, nor a non-idempotent call started before', () => {
    fc.assert(
      fc.property(events, (list) => {
        for (const { event: e, effects } of run(list).steps) {
          if (e.type !== 'journal_read') continue;
          for (const effect of effects.filter((x) => x.type === 'run_call')) {
            const call = e.calls.find((c) => c.id === effect.callId);
            expect(e.results).not.toContain(effect.callId);
            if (e.started.includes(effect.callId)) expect(call?.idempotent).toBe(true);
          }
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('is a function of plain JSON: deep-frozen and round-tripped inputs give the same result', () => {
    fc.assert(
      fc.property(events, event, (list, last) => {
        const { hold } = run(list);
        const copy = JSON.parse(JSON.stringify(hold)) as Hold;
        const frozen = Object.freeze({
          ...hold,
          consumed: Object.freeze([...hold.consumed]),
          unwritten: Object.freeze([...hold.unwritten]),
        });
        expect(protocolStep(frozen, last)).toEqual(protocolStep(copy, last));
        expect(JSON.parse(JSON.stringify(protocolStep(hold, last)))).toEqual(protocolStep(hold, last));
      }),
      { numRuns: NUM_RUNS },
    );
    testLog(`protocolStep properties: ${NUM_RUNS} runs each`);
  });

  it('claims the free capacity, none while stopping', () => {
    fc.assert(
      fc.property(fc.nat(8), fc.integer({ min: 1, max: 8 }), fc.boolean(), (held, concurrency, stopping) => {
        const limit = claimLimit({ held, concurrency, stopping });
        expect(limit).toBe(stopping ? 0 : Math.max(0, concurrency - held));
      }),
      { numRuns: NUM_RUNS },
    );
  });
});

describe('the claim statement is `claimable` in SQL (PGlite)', () => {
  it('takes exactly the turns the predicate allows, over every mix of runnable, lease, retry time and an earlier turn of its thread', async () => {
    const sql = await openSql('memory://');
    const store = createStore(sql);
    try {
      const times = { none: null, past: -60_000, future: 60_000 } as const;
      type Thread = 'none' | 'open_before' | 'ended_before';
      const cases: { id: string; runnable: boolean; lease: keyof typeof times; retry: keyof typeof times; thread: Thread }[] = [];
      for (const runnable of [true, false])
        for (const lease of ['none', 'past', 'future'] as const)
          for (const retry of ['none', 'past', 'future'] as const)
            for (const thread of ['none', 'open_before', 'ended_before'] as const)
              cases.push({ id: `c_${cases.length}`, runnable, lease, retry, thread });
      for (const c of cases) {
        if (c.thread !== 'none') {
          // An earlier turn of its thread, open or ended, that no claim takes itself (not runnable).
          const before = await store.submit({ agent: 'a', id: `${c.id}_before`, thread: `th_${c.id}` });
          await sql.query(
            `UPDATE turnkit_turns SET runnable = false, ended_at = ${c.thread === 'ended_before' ? 'now()' : 'NULL'} WHERE id = $1`,
            [before],
          );
        }
        await store.submit({ agent: 'a', id: c.id, ...(c.thread === 'none' ? {} : { thread: `th_${c.id}` }) });
        const at = (key: keyof typeof times): string =>
          times[key] === null ? 'NULL' : `now() + ${times[key]} * interval '1 millisecond'`;
        await sql.query(
          `UPDATE turnkit_turns SET runnable = $2, lease_owner = ${c.lease === 'none' ? 'NULL' : "'other'"}, lease_expires_at = ${at(c.lease)}, run_after = ${at(c.retry)} WHERE id = $1`,
          [c.id, c.runnable],
        );
      }
      const claimed = (await store.claimMany({ owner: 'probe', leaseMs: 1000, limit: cases.length }))
        .map((c) => c.lease.id)
        .sort();
      const expected = cases
        .filter((c) =>
          claimable(
            {
              runnable: c.runnable,
              leaseExpiresAt: times[c.lease],
              runAfter: times[c.retry],
              ...(c.thread === 'none' ? {} : { threadBusy: c.thread === 'open_before' }),
            },
            0,
          ),
        )
        .map((c) => c.id)
        .sort();
      expect(expected.length).toBeGreaterThan(0);
      expect(claimed).toEqual(expected);
    } finally {
      await store.close();
    }
  });
});

describe('the protocol function (worker/protocol.ts)', () => {
  it('imports nothing outside its own file (no pg, no PGlite, no other package)', () => {
    const file = new URL('../src/worker/protocol.ts', import.meta.url);
    const imports = [...readFileSync(file, 'utf8').matchAll(/from '([^']+)'/g)].map((m) => m[1]);
    expect(imports, `${file.pathname} imports ${imports.join(', ')}`).toEqual([]);
  });
});
