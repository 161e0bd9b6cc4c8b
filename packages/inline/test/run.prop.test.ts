import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ApprovalDecision, Message, ParkedCall } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import { runTurn, type RunTurnOptions } from '@turnkit/inline';
import { call, fail, replay, scriptedModel, text, toolCalls, type ScriptStep } from '@turnkit/testing';
import { testLog } from '../../../test-log.ts';

const NUM_RUNS = 300;

const tools = [
  defineTool({
    name: 'add',
    description: 'Adds.',
    input: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => a + b,
  }),
  defineTool({
    name: 'boom',
    description: 'Throws.',
    input: z.object({}),
    execute: () => {
      throw new Error('boom');
    },
  }),
  defineTool({
    name: 'deploy',
    description: 'Needs approval.',
    input: z.object({}),
    needsApproval: true,
    execute: () => 'deployed',
  }),
];

const anyCall = fc.oneof(
  fc.record({ a: fc.integer({ min: 0, max: 2 }), b: fc.integer({ min: 0, max: 2 }) }).map((input) => call('add', input)),
  fc.constant(call('add', { a: 'x' })),
  fc.constant(call('boom')),
  fc.constant(call('deploy')),
  fc.constant(call('nope')),
  fc.constant(call('add', '{"a":', { inputError: 'not JSON' })),
);

const anyStep: fc.Arbitrary<ScriptStep> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('done', '{"answer": 1}', '{"answer": "one"}').map((t) => text(t)) },
  { weight: 4, arbitrary: fc.array(anyCall, { minLength: 1, maxLength: 3 }).map((calls) => toolCalls(...calls)) },
  { weight: 1, arbitrary: fc.constantFrom(fail('down'), fail(Object.assign(new Error('busy'), { retryable: true }))) },
);

type Approver = 'none' | 'approve' | 'reject' | 'expire';
const approvers: Record<Exclude<Approver, 'none'>, (pending: readonly ParkedCall[]) => Record<string, ApprovalDecision>> = {
  approve: (p) => Object.fromEntries(p.map((x) => [x.call.id, { type: 'approve' }])),
  reject: (p) => Object.fromEntries(p.map((x) => [x.call.id, { type: 'reject' }])),
  expire: () => ({}),
};

/** Invariant 6: every tool call gets exactly one result, in call order, right after its assistant message. */
function checkTranscript(transcript: readonly Message[], suspended: boolean): void {
  for (let i = 0; i < transcript.length; i += 1) {
    const m = transcript[i]!;
    if (m.role !== 'assistant' || m.toolCalls.length === 0) continue;
    const results = transcript.slice(i + 1, i + 1 + m.toolCalls.length);
    if (suspended && i + 1 === transcript.length) return; // the parked batch has no results yet
    expect(results.map((r) => (r.role === 'tool' ? r.result.callId : r.role))).toEqual(m.toolCalls.map((c) => c.id));
    expect(transcript[i + 1 + m.toolCalls.length]?.role).not.toBe('tool');
  }
}

describe('runTurn over random scripts', () => {
  it('always settles, keeps the transcript consistent, respects the model call bound and replays', async () => {
    testLog(`runTurn random scripts: numRuns ${NUM_RUNS}`);
    await fc.assert(
      fc.asyncProperty(
        fc.array(anyStep, { maxLength: 8 }),
        fc.record({
          maxIterations: fc.integer({ min: 1, max: 4 }),
          loopThreshold: fc.constantFrom(0, 2, 3),
          maxOutputRepairs: fc.integer({ min: 0, max: 2 }),
        }),
        fc.constantFrom<Approver>('none', 'approve', 'reject', 'expire'),
        fc.boolean(),
        async (steps, limits, approver, withSchema) => {
          const options: RunTurnOptions = {
            model: scriptedModel(steps),
            tools,
            input: 'go',
            limits,
            trace: true,
            modelRetryBackoffMs: 0,
            ...(approver === 'none' ? {} : { approve: approvers[approver] }),
            ...(withSchema ? { output: z.object({ answer: z.number() }) } : {}),
          };
          const result = await runTurn(options);
          expect(['stopped', 'failed', 'cancelled', 'suspended']).toContain(result.status);
          if (result.status === 'suspended') expect(approver).toBe('none');
          else expect(result.state.outcome?.status).toBe(result.status);
          checkTranscript(result.transcript, result.status === 'suspended');
          // Each call core issues may be retried (default maxModelRetries: 2), and every retry counts.
          expect(result.usage.modelCalls).toBeLessThanOrEqual((limits.maxIterations + 1 + limits.maxOutputRepairs) * 3);
          const report = replay(JSON.parse(JSON.stringify(result.trace)));
          expect(report.ok, report.ok ? '' : report.difference.message).toBe(true);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});
