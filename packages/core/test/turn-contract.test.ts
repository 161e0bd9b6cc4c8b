// docs/turn-contract.md names every status, state field, event, effect and notice of core's types
// in its tables, and the transition table covers every event and effect. The records below are
// typed against core's unions, so `pnpm typecheck` fails when a type gains or loses a member and
// this list is not updated; the tests then ask the doc for the new name.
import { describe, expect, it } from 'vitest';
import type { EffectType, NoticeName, TurnEventType } from '../src/types.ts';
import type { StopReason, TurnBatch, TurnState, TurnStatus } from '@turnkit/core';
import type { ParsedEvent } from '../src/events.js';
import { codeNames, readDoc, section, tableRows } from './markdown.js';

const STATUSES: Record<TurnStatus, true> = {
  ready: true,
  calling_model: true,
  dispatching: true,
  awaiting_approval: true,
  executing_approved: true,
  delegating: true,
  steering: true,
  finalizing: true,
  stopped: true,
  failed: true,
  cancelled: true,
};
const FIELDS: Record<keyof TurnState, true> = {
  version: true,
  id: true,
  status: true,
  limits: true,
  round: true,
  usage: true,
  forced: true,
  batch: true,
  lastBatch: true,
  repeats: true,
  repairs: true,
  recoveries: true,
  candidate: true,
  nextModel: true,
  lastRequest: true,
  outcome: true,
  callIds: true,
  agents: true,
};
const BATCH_FIELDS: Record<keyof TurnBatch, true> = { calls: true, notExecuted: true, held: true, parked: true, decisions: true };
const EVENTS: Record<TurnEventType, true> = {
  start: true,
  model_responded: true,
  model_failed: true,
  tools_completed: true,
  tools_parked: true,
  approvals_decided: true,
  approval_expired: true,
  approved_tools_completed: true,
  compacted: true,
  output_accepted: true,
  output_rejected: true,
  cancel: true,
  cancel_batch: true,
  effect_failed: true,
  child: true,
};
// The reducer reads exactly the event types anyone can send: no internal pseudo-event (a malformed
// reply is a `model_responded` whose response is null). `pnpm typecheck` fails otherwise.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const PARSED_TYPES_ARE_EVENT_TYPES: Same<ParsedEvent['type'], TurnEventType> = true;
const EFFECTS: Record<EffectType, true> = {
  append: true,
  emit: true,
  persist: true,
  call_llm: true,
  dispatch_tools: true,
  execute_approved: true,
  compact: true,
  check_output: true,
  done: true,
  child: true,
};
const NOTICES: Record<NoticeName, true> = {
  turn_started: true,
  iteration: true,
  steering: true,
  awaiting_approval: true,
  limit_reached: true,
  ignored_event: true,
  model_retry: true,
  hook_blocked: true,
};
const STOP_REASONS: Record<StopReason, true> = {
  completed: true,
  max_iterations: true,
  loop_detected: true,
  budget_exhausted: true,
  hook_stopped: true,
};

const doc = readDoc('docs/turn-contract.md');
/** The names in code font of column `column` of the table under `heading`. */
const column = (heading: string, index: number): string[] =>
  tableRows(section(doc, heading)).flatMap((row) => codeNames(row[index] ?? ''));
const sorted = (names: Iterable<string>): string[] => [...new Set(names)].sort();

describe("docs/turn-contract.md matches core's types", () => {
  it('the Statuses table lists every status, and nothing else', () => {
    expect(sorted(column('Statuses', 0))).toEqual(sorted(Object.keys(STATUSES)));
  });

  it('the Fields table lists every field of TurnState, and nothing else', () => {
    expect(sorted(column('Fields', 0))).toEqual(sorted(Object.keys(FIELDS)));
  });

  it('the Batch table lists every field of TurnBatch, and nothing else', () => {
    expect(sorted(column('Batch', 0))).toEqual(sorted(Object.keys(BATCH_FIELDS)));
  });

  it('the Events table lists every event type, and nothing else', () => {
    expect(PARSED_TYPES_ARE_EVENT_TYPES).toBe(true);
    expect(sorted(column('Events', 0))).toEqual(sorted(Object.keys(EVENTS)));
  });

  it('the Effects table lists every effect type, and nothing else', () => {
    expect(sorted(column('Effects', 0))).toEqual(sorted(Object.keys(EFFECTS)));
  });

  it('the Notices table lists every notice, and nothing else', () => {
    expect(sorted(column('Notices', 0))).toEqual(sorted(Object.keys(NOTICES)));
  });

  it('the Data table names every stop reason', () => {
    const stopReason = tableRows(section(doc, 'Data')).find((row) => row[0] === '`StopReason`');
    expect(sorted(codeNames(stopReason?.[1] ?? ''))).toEqual(sorted(Object.keys(STOP_REASONS)));
  });

  it('the transition table has a row for every non-terminal status and mentions every event and effect', () => {
    const rows = tableRows(section(doc, 'Transitions'));
    const statusCells = rows.map((row) => row[0] ?? '');
    for (const status of Object.keys(STATUSES).filter((s) => !['stopped', 'failed', 'cancelled'].includes(s))) {
      expect(statusCells, status).toContain(status);
    }
    const events = rows.map((row) => row[1] ?? '').join(' ');
    for (const event of Object.keys(EVENTS)) expect(events, event).toMatch(new RegExp(`\\b${event}\\b`));
    const effects = rows.map((row) => row[3] ?? '').join(' ');
    for (const effect of Object.keys(EFFECTS)) expect(effects, effect).toMatch(new RegExp(`\\b${effect}\\b`));
    expect(rows.every((row) => row.length === 4)).toBe(true);
  });

  it('the resume table has a row for every status', () => {
    const cells = tableRows(section(doc, 'Resume')).map((row) => row[0] ?? '');
    for (const status of Object.keys(STATUSES))
      expect(
        cells.some((cell) => cell.split(/[ ,]+/).includes(status)),
        status,
      ).toBe(true);
  });

  it('the Invariants table has the ten invariants, numbered 1 to 10', () => {
    expect(tableRows(section(doc, 'Invariants')).map((row) => row[0])).toEqual([
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
      '8',
      '9',
      '10',
    ]);
  });
});
