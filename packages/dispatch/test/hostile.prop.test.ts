// Hostile input: whatever the model sends and whatever the tools return, dispatch never throws,
// never pollutes Object.prototype, and answers every call exactly once, in call order.
import type { ToolCall } from '@turnkit/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDispatcher, defineTool } from '../src/index.js';
import type { DecisionRecord } from '../src/internal.js';
import { DEEP_OBJECT, Giant, hostileCall, materialize, TEN_MB } from './arbitraries.js';
import { testLog } from '../../../test-log.ts';

const MAX_OUTPUT = 2000;
const MARKER_ROOM = 40;

function chaosOutput(mode: number): unknown {
  switch (mode) {
    case 0: {
      const cycle: Record<string, unknown> = {};
      cycle['self'] = cycle;
      return cycle;
    }
    case 1:
      return 10n;
    case 2:
      return () => 'fn';
    case 3:
      return TEN_MB;
    case 4:
      return DEEP_OBJECT;
    case 5:
      throw 'a thrown string';
    case 6:
      throw Object.defineProperty(new Error('x'), 'message', {
        get() {
          throw new Error('message getter');
        },
      });
    case 7:
      return Promise.reject(undefined);
    case 8:
      return new Promise(() => {}); // hangs until the 1 ms timeout
    case 9:
      return JSON.parse('{"__proto__": {"polluted": "yes"}, "ok": true}');
    case 10:
      return { big: [TEN_MB] };
    case 11:
      return Promise.resolve({ nested: { fine: [1, 2, 3] } });
    default:
      return undefined;
  }
}

function makeDispatcher(records: DecisionRecord[]) {
  return createDispatcher({
    tools: [
      defineTool({
        name: 'echo',
        description: 'Echo.',
        input: z.object({ text: z.string() }),
        readOnly: true,
        execute: ({ text }) => text,
      }),
      defineTool({
        name: 'chaos',
        description: 'Misbehaves.',
        input: z.object({ mode: z.number().int() }),
        timeoutMs: 1,
        execute: ({ mode }) => chaosOutput(mode),
      }),
      defineTool({ name: 'mirror', description: 'Returns its input.', input: z.looseObject({}), execute: (input) => input }),
      defineTool({
        name: 'record',
        description: 'Any object.',
        input: z.record(z.string(), z.unknown()),
        execute: (input) => ({ ...input }),
      }),
    ],
    permissions: { deny: ['mirror:x=*evil*'], ask: ['record:x=*'] },
    hooks: {
      before: [
        {
          name: 'spread',
          run: ({ input }) =>
            input !== null && typeof input === 'object' && !Array.isArray(input)
              ? { kind: 'rewrite', input: { ...input } }
              : undefined,
        },
      ],
      after: [
        {
          name: 'merge',
          run: (result) =>
            result.output !== null && typeof result.output === 'object'
              ? { output: Object.assign({}, result.output) }
              : undefined,
        },
      ],
    },
    maxOutputChars: MAX_OUTPUT,
    onDecision: (r) => records.push(r),
  });
}

function isJson(value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(JSON.stringify(value))) === JSON.stringify(value);
  } catch {
    return false;
  }
}

describe('hostile input', () => {
  it('never throws, never pollutes, and answers every call once in order', async () => {
    const numRuns = 500;
    let totalCalls = 0;
    let giants = 0;
    let executed = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(hostileCall, { minLength: 20, maxLength: 30 }), async (entries) => {
        const calls = entries.map((entry, i) => {
          if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return entry;
          const e = entry as Record<string, unknown>;
          if (
            e['name'] instanceof Giant ||
            e['input'] instanceof Giant ||
            (e['input'] as { text?: unknown } | null)?.text instanceof Giant
          )
            giants++;
          const input =
            e['input'] !== null && typeof e['input'] === 'object' && (e['input'] as { text?: unknown }).text instanceof Giant
              ? { text: TEN_MB }
              : materialize(e['input']);
          return { id: `c${i}`, ...e, name: materialize(e['name']), input };
        });
        totalCalls += calls.length;
        const records: DecisionRecord[] = [];
        const dispatcher = makeDispatcher(records);
        const { results, parked } = await dispatcher.dispatch(calls as ToolCall[], { turnId: 'hostile' });

        // One answer per call, in call order (malformed entries are answered with id '').
        const expectedIds = calls.map((c) => {
          const id = (c as { id?: unknown } | null)?.id;
          return typeof id === 'string' ? id : '';
        });
        const parkedIds = new Set(parked.map((p) => p.call.id));
        expect(results.map((r) => r.callId)).toEqual(expectedIds.filter((id) => !parkedIds.has(id)));
        expect(parked.map((p) => p.call.id)).toEqual(expectedIds.filter((id) => parkedIds.has(id)));
        expect(records).toHaveLength(calls.length);
        executed += records.filter((r) => r.decision === 'allow').length;

        for (const r of results) {
          expect(typeof r.isError).toBe('boolean');
          expect(isJson(r.output)).toBe(true);
          expect(JSON.stringify(r.output).length).toBeLessThanOrEqual(MAX_OUTPUT + MARKER_ROOM);
        }
        // The parked calls, approved, run without throwing and answer once each.
        const approved = await dispatcher.executeApproved(
          parked.map((p) => p.call),
          { turnId: 'hostile' },
        );
        expect(approved.map((r) => r.callId)).toEqual(parked.map((p) => p.call.id));
        expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
        expect(Object.keys(Object.prototype)).toEqual([]);
      }),
      { numRuns },
    );
    testLog(`hostile input: numRuns=${numRuns}, calls=${totalCalls}, giant values=${giants}, tools run=${executed}`);
    expect(totalCalls).toBeGreaterThanOrEqual(10_000);
    expect(giants).toBeGreaterThan(0);
    expect(executed).toBeGreaterThan(1000);
  });
});
