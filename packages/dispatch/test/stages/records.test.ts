// Decision records on their own: built from verdicts and decisions, emitted in order.
import { describe, expect, it } from 'vitest';
import { approvalSource, closingRecord, decisionRecord, emitRecords } from '../../src/records.js';
import type { DecisionRecord } from '../../src/types.js';

const call = { id: 'c1', name: 'shell', input: {} };

describe('decisionRecord', () => {
  it('records allow, ask and deny with their sources; a denial gives its text as the reason', () => {
    expect(decisionRecord({ kind: 'execute', call, input: {}, source: 'default' })).toEqual({
      callId: 'c1',
      tool: 'shell',
      decision: 'allow',
      source: 'default',
    });
    expect(decisionRecord({ kind: 'needs_approval', call, input: {}, reason: 'r', source: 'rule:ask:shell' })).toEqual({
      callId: 'c1',
      tool: 'shell',
      decision: 'ask',
      source: 'rule:ask:shell',
      reason: 'r',
    });
    const result = { callId: 'c1', name: 'shell', output: 'x'.repeat(600), isError: true };
    expect(decisionRecord({ kind: 'deny', result, source: 'policy' })).toEqual({
      callId: 'c1',
      tool: 'shell',
      decision: 'deny',
      source: 'policy',
      reason: 'x'.repeat(500),
    });
    expect(
      decisionRecord({ kind: 'deny', result: { ...result, output: { halted: true } }, source: 'hook:h' }),
    ).not.toHaveProperty('reason');
  });
});

describe('approvalSource and closingRecord', () => {
  it('records approvals with what they remember, and rejections with their reason, cleaned and capped', () => {
    expect(approvalSource({ type: 'approve' })).toBe('user');
    expect(approvalSource({ type: 'approve', remember: 'tool' })).toBe('user:remember_tool');
    expect(closingRecord(call, { type: 'reject', reason: 'no' })).toEqual({
      callId: 'c1',
      tool: 'shell',
      decision: 'user_rejected',
      source: 'user',
      reason: 'no',
    });
    expect(closingRecord(call, { type: 'reject', reason: `a\u001b[31m${'x'.repeat(500)}` }).reason).toHaveLength(200);
    expect(() => closingRecord(call, { type: 'maybe' } as never)).toThrow(
      "recordDecision for call 'c1' needs { type: 'approve' | 'reject' | 'expired' | 'approve_failed' | 'cancelled' }, got maybe.",
    );
  });
});

describe('emitRecords', () => {
  it('emits in order and keeps going when the sink throws', () => {
    const seen: string[] = [];
    const records = ['a', 'b'].map((id): DecisionRecord => ({ callId: id, tool: 't', decision: 'allow', source: 'default' }));
    emitRecords((r) => {
      seen.push(r.callId);
      throw new Error('sink down');
    }, records);
    expect(seen).toEqual(['a', 'b']);
  });
});
