// Every call id core accepts can be parked, decided and applied, including ids that name
// properties of Object.prototype (`__proto__`, `constructor`, `hasOwnProperty`).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTurnState, step } from '@turnkit/core';
import type { Effect, ToolCall, ToolResult, TurnState } from '@turnkit/core';
import { call, dispatching, drive, ev, ok, synth, TEXT } from './helpers.js';

const PROTOTYPE_NAMES = [
  '__proto__',
  'constructor',
  'hasOwnProperty',
  'toString',
  'valueOf',
  'isPrototypeOf',
  '__defineGetter__',
  'prototype',
];
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Any id core accepts: 1 to 256 characters without control characters, prototype names often. */
const acceptedId = fc.oneof(
  fc.constantFrom(...PROTOTYPE_NAMES),
  fc.string({ minLength: 1, maxLength: 256, unit: 'binary' }).filter((id) => !CONTROL.test(id)),
  fc.string({ minLength: 1, maxLength: 12 }).filter((id) => !CONTROL.test(id)),
);

const results = (effects: readonly Effect[]): ToolResult[] =>
  effects.flatMap((e) => (e.type === 'append' && e.message.role === 'tool' ? [e.message.result] : []));

describe('ids: park -> decide -> the decision is applied, for every accepted id', () => {
  it('whether decided in one event or one id at a time, with the parked state saved and read back in between', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(acceptedId, { minLength: 1, maxLength: 4 }),
        fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
        fc.boolean(),
        (ids, approve, oneAtATime) => {
          const sent = dispatching(ids.map((id, i) => call(id, `tool${i}`)));
          // The ids core gave the calls (an id ending in `~<digits>` gets a derived one).
          const calls: readonly ToolCall[] = sent.batch?.calls ?? [];
          const parkedState = drive(
            sent,
            ev.parked(
              [],
              calls.map((c) => ({ call: c })),
            ),
          )[0];
          // A decision arrives as JSON text (a UI, a webhook): JSON.parse makes `__proto__` an own key.
          let state: TurnState = parseTurnState(JSON.stringify(parkedState));
          const decision = (i: number) => (approve[i] ? { type: 'approve' } : { type: 'reject' });
          const events = oneAtATime
            ? calls.map(
                (c, i) => `{"type":"approvals_decided","decisions":{${JSON.stringify(c.id)}:${JSON.stringify(decision(i))}}}`,
              )
            : [
                `{"type":"approvals_decided","decisions":{${calls.map((c, i) => `${JSON.stringify(c.id)}:${JSON.stringify(decision(i))}`).join(',')}}}`,
              ];
          let effects: Effect[] = [];
          for (const text of events) {
            [state, effects] = step(state, JSON.parse(text));
            expect(effects.some((e) => e.type === 'emit' && e.notice.name === 'ignored_event')).toBe(false);
          }
          const approved = calls.filter((_, i) => approve[i]);
          if (approved.length > 0) {
            expect(effects.at(-1)).toEqual({ type: 'execute_approved', calls: approved });
            state = parseTurnState(JSON.stringify(state));
            [state, effects] = step(state, ev.approvedCompleted(approved.map((c) => ok(c))));
          }
          expect(state.status).toBe('steering');
          expect(results(effects)).toEqual(calls.map((c, i) => (approve[i] ? ok(c) : synth(c, TEXT.rejected()))));
        },
      ),
      { numRuns: 300 },
    );
  });
});
