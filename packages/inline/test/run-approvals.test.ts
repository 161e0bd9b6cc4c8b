import { describe, expect, it } from 'vitest';
import { createDispatcher } from '@turnkit/dispatch';
import type { DecisionRecord } from '@turnkit/dispatch/internal';
import { runTurn } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls, transcriptLines } from '@turnkit/testing';
import { deploy } from './run-tools.ts';

describe('runTurn: approvals (callback, records, grants)', () => {
  it('rejects every parked call when approve throws (fail closed)', async () => {
    const result = await runTurn({
      model: scriptedModel([toolCalls(call('deploy', { service: 'api' })), text('ok')]),
      tools: [deploy],
      input: 'hi',
      approve: () => {
        throw new Error('pager offline');
      },
    });
    expect(transcriptLines(result.transcript)[2]).toMatch(
      /^tool call_1 deploy: error rejected: the approve callback failed \(pager offline\)/,
    );
  });

  it('records user decisions with the dispatcher and remembers grants', async () => {
    const records: DecisionRecord[] = [];
    const dispatcher = createDispatcher({ tools: [deploy], onDecision: (r) => records.push(r) });
    const result = await runTurn({
      model: scriptedModel([toolCalls(call('deploy', { service: 'api' })), text('ok')]),
      tools: dispatcher,
      input: 'hi',
      approve: () => ({ call_1: { type: 'approve', remember: 'session' } }),
    });
    expect(result.status).toBe('stopped');
    expect(records.map((r) => r.decision)).toEqual(['ask', 'user_approved']);
    // The grant belongs to this turn, not to every turn of the dispatcher.
    expect(dispatcher.grants()).toEqual([]);
    expect(dispatcher.grants({ turnId: result.state.id })).toEqual([{ scope: 'session' }]);
  });

  it('a person who quits at the approval prompt cancels the turn; the call gets one final record, cancelled', async () => {
    const records: DecisionRecord[] = [];
    const controller = new AbortController();
    const dispatcher = createDispatcher({ tools: [deploy], onDecision: (r) => records.push(r) });
    const result = await runTurn({
      model: scriptedModel([toolCalls(call('deploy', { service: 'api' })), text('never asked')]),
      tools: dispatcher,
      input: 'hi',
      signal: controller.signal,
      approve: () => {
        controller.abort('quit at the prompt');
        throw new Error('User force closed the prompt');
      },
    });
    expect(result.status).toBe('cancelled');
    expect(result.reason).toBe('quit at the prompt');
    expect(records.map((r) => [r.decision, r.source])).toEqual([
      ['ask', 'needs_approval'],
      ['deny', 'cancelled'],
    ]);
    expect(transcriptLines(result.transcript).at(-1)).toMatch(/^tool call_1 deploy: error cancelled/);
  });
});
