// The interpreter's races under every interleaving fast-check's scheduler tries: a cancel against
// a model call, against a tool batch, against an approval callback and against approved calls
// executing. In every schedule every call gets exactly one result and one final decision record,
// no call that needs approval runs without it, and the turn ends terminal with no unhandled
// rejection.
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Model, ModelResponse, ToolCall } from '@turnkit/core';
import { createDispatcher, defineTool } from '@turnkit/dispatch';
import type { DecisionRecord } from '@turnkit/dispatch/internal';
import { runTurn } from '@turnkit/inline';
import { testLog } from '../../../test-log.ts';

const RACE_SEED = Number(process.env.TURNKIT_RACE_SEED ?? 1);

type Phase = 'model' | 'tools' | 'approval' | 'approved' | 'idle';

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
beforeEach(() => process.on('unhandledRejection', onUnhandled));
afterEach(() => void process.off('unhandledRejection', onUnhandled));

describe('inline: cancel races under fc.scheduler', () => {
  it('every call gets one result and one final record, nothing runs unapproved, the turn ends (numRuns 300)', async () => {
    const hit = new Set<Phase>();
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.record({ guarded: fc.boolean(), approve: fc.boolean() }), { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        async (s, plan, cancels) => {
          const controller = new AbortController();
          let phase: Phase = 'idle';
          const ranGuarded: string[] = [];
          const records: DecisionRecord[] = [];
          const input = z.object({ i: z.number() });
          const safe = defineTool({
            name: 'safe',
            description: 'Reads.',
            input,
            readOnly: true,
            execute: async ({ i }) => {
              phase = 'tools';
              return s.schedule(Promise.resolve(i), `safe ${i}`);
            },
          });
          const guarded = defineTool({
            name: 'guarded',
            description: 'Writes.',
            input,
            needsApproval: true,
            execute: async ({ i }, ctx) => {
              phase = 'approved';
              ranGuarded.push(ctx.callId);
              return s.schedule(Promise.resolve(i), `guarded ${i}`);
            },
          });
          const calls: ToolCall[] = plan.map((p, i) => ({ id: `c${i}`, name: p.guarded ? 'guarded' : 'safe', input: { i } }));
          const replies: ModelResponse[] = [
            { text: '', toolCalls: calls },
            { text: 'done', toolCalls: [] },
          ];
          let next = 0;
          const model: Model = {
            generate: () => {
              phase = 'model';
              const reply = replies[Math.min(next++, replies.length - 1)] as ModelResponse;
              return s.schedule(Promise.resolve(reply), `model ${next}`);
            },
          };
          const approved = new Set(plan.flatMap((p, i) => (p.guarded && p.approve ? [`c${i}`] : [])));
          if (cancels)
            void s.schedule(Promise.resolve(), 'cancel').then(() => {
              hit.add(phase);
              controller.abort('the user pressed stop');
            });
          const result = await s.waitFor(
            runTurn({
              model,
              tools: createDispatcher({ tools: [safe, guarded], onDecision: (r) => records.push(r) }),
              input: 'go',
              signal: controller.signal,
              approve: async (pending) => {
                phase = 'approval';
                const answer = Object.fromEntries(
                  pending.map((p) => [
                    p.call.id,
                    approved.has(p.call.id) ? { type: 'approve' as const } : { type: 'reject' as const },
                  ]),
                );
                return s.schedule(Promise.resolve(answer), 'approve');
              },
            }),
          );
          await s.waitAll();

          expect(['stopped', 'cancelled']).toContain(result.status);
          if (!cancels) expect(result.status).toBe('stopped');
          // Exactly one result per call the model made, in the transcript.
          const asked = result.transcript.flatMap((m) => (m.role === 'assistant' ? m.toolCalls.map((c) => c.id) : []));
          const answered = result.transcript.flatMap((m) => (m.role === 'tool' ? [m.result.callId] : []));
          expect(answered.sort()).toEqual(asked.sort());
          // No call that needs approval ran without one.
          for (const id of ranGuarded) expect(approved.has(id)).toBe(true);
          // One final decision record per call that reached the dispatcher.
          const finals = records.filter((r) => r.decision !== 'ask').map((r) => r.callId);
          expect(new Set(finals).size).toBe(finals.length);
          const dispatched = new Set(records.map((r) => r.callId));
          expect(finals.sort()).toEqual([...dispatched].sort());
          expect(unhandled).toEqual([]);
        },
      ),
      // A fixed seed: the phases a cancel lands in are a coverage claim checked below, and a
      // random seed missed the rarest one (a cancel while an approved call runs) about once in
      // a few hundred runs.
      { numRuns: 300, seed: RACE_SEED },
    );
    testLog(`races: cancel landed during ${[...hit].sort().join(', ')}`);
    for (const phase of ['model', 'tools', 'approval', 'approved'] as const) expect(hit.has(phase), phase).toBe(true);
  });
});
