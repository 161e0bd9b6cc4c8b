// checkAgent on small agents: exhaustive and clean when the rules are right, and each planted
// mistake in an agent's rules found with its shortest path. TURNKIT_TEST_VERBOSE=1 prints the figures.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  atMostCalls,
  checkAgent,
  checkAgentTrace,
  neverAfter,
  neverWithoutApproval,
  property,
  type AgentProperty,
  type CheckAgentResult,
  type CheckedAgent,
  type StepFunction,
} from '@turnkit/check';
import { step, type CallRecord } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import * as z from 'zod';
import { agents, properties as filesProperties } from '../examples/files-agent.ts';
import { testLog } from '../../../test-log.ts';

const pathInput = z.object({ path: z.string() });
const readFile = defineTool({ name: 'read_file', description: 'Read.', input: pathInput, readOnly: true, execute: () => 'text' });
const deleteFile = defineTool({
  name: 'delete_file',
  description: 'Delete.',
  input: pathInput,
  needsApproval: true,
  execute: () => 'gone',
});
const writeFile = defineTool({
  name: 'write_file',
  description: 'Write.',
  input: z.object({ path: z.string(), text: z.string() }),
  execute: () => 'written',
});
const pay = defineTool({
  name: 'pay',
  description: 'Pay an invoice.',
  input: z.object({ invoice: z.string() }),
  execute: () => 'paid',
});

function log(name: string, result: CheckAgentResult): void {
  testLog(
    `checkAgent ${name}: states=${result.states} transitions=${result.transitions} depth=${result.depth} exhaustive=${result.exhaustive} ` +
      `violations=${result.violationCount} time=${result.ms}ms${result.violations.map((v) => `\n  ${v.property}: ${v.message}\n    ${v.path.map((s) => s.label).join(' → ')}`).join('')}`,
  );
}

const labels = (result: CheckAgentResult, property: string): string[] =>
  result.violations.find((v) => v.property === property)?.path.map((s) => s.label) ?? [];

describe('checkAgent: the files agent of docs/check-your-agent.md', () => {
  it('is explored exhaustively and keeps every property', async () => {
    const result = await checkAgent(agents.files, { properties: filesProperties });
    log('files', result);
    expect(result.exhaustive).toBe(true);
    expect(result.cutOff).toBeNull();
    expect(result.violations).toEqual([]);
    // The inputs its rules distinguish: one per rule of read_file and one that matches none.
    expect(result.calls.map((c) => `${c.tool} ${JSON.stringify(c.input)}`)).toEqual([
      'delete_file {"path":"x"}',
      'read_file {"path":"/etc/"}',
      'read_file {"path":"/home/me/notes/"}',
      'read_file {"path":"other"}',
    ]);
    // Every way these limits end a turn is reached.
    expect(Object.keys(result.terminalOutcomes).sort()).toEqual(['cancelled', 'stopped:completed', 'stopped:max_iterations']);
  });
});

describe('checkAgent: a check cut off says by what', () => {
  it('maxStates: it stops after the node that reached the bound, at the end of that node’s edges', async () => {
    const result = await checkAgent(agents.files, { properties: filesProperties, maxStates: 500 });
    expect(result).toMatchObject({ exhaustive: false, cutOff: 'maxStates' });
    expect(result.states).toBeGreaterThanOrEqual(500);
    expect(result.states).toBeLessThan(600);
  });

  it('maxDepth: the levels below it are not expanded', async () => {
    const result = await checkAgent(agents.files, { properties: filesProperties, maxDepth: 4 });
    expect(result).toMatchObject({ exhaustive: false, cutOff: 'maxDepth', depth: 4 });
  });
});

describe('checkAgent: planted mistakes are found, with the shortest path', () => {
  it('an allow pattern that also matches a dangerous input (meant for read_file, written for every tool)', async () => {
    const planted: CheckedAgent = {
      ...agents.files,
      permissions: { deny: ['read_file:path=/etc/*'], allow: ['*:path=/home/me/*'] },
    };
    const result = await checkAgent(planted, { properties: filesProperties });
    log('broad allow', result);
    const broken = "delete_file never runs without a person's approval";
    expect(result.violations.map((v) => v.property)).toEqual([broken]);
    expect(labels(result, broken)).toEqual([
      'start',
      'reply: delete_file({"path":"/home/me/"})',
      'dispatch: call-1 runs (rule:allow:*:path=/home/me/*) ok',
    ]);
    // The fix: the allow rule names its tool.
    const fixed = await checkAgent(
      { ...planted, permissions: { deny: ['read_file:path=/etc/*'], allow: ['read_file:path=/home/me/*'] } },
      { properties: filesProperties },
    );
    expect(fixed.violations).toEqual([]);
    expect(fixed.exhaustive).toBe(true);
  });

  it('readOnly on a tool that writes', async () => {
    const writer = { ...writeFile, readOnly: true };
    const properties = [neverWithoutApproval('write_file')];
    const result = await checkAgent({ tools: [readFile, writer], limits: { maxIterations: 1 } }, { properties });
    log('readOnly writer', result);
    expect(labels(result, "write_file never runs without a person's approval")).toEqual([
      'start',
      'reply: write_file({"path":"x","text":"x"})',
      'dispatch: call-1 runs (readonly) ok',
    ]);
    const fixed = await checkAgent({ tools: [readFile, writeFile], limits: { maxIterations: 1 } }, { properties });
    expect(fixed.violations).toEqual([]);
    expect(fixed.exhaustive).toBe(true);
  });

  it('a missing budget: pay runs twice', async () => {
    const agent: CheckedAgent = { tools: [pay], permissions: { allow: ['pay'] }, limits: { maxIterations: 2 } };
    const properties = [atMostCalls('pay', 1)];
    const result = await checkAgent(agent, { properties });
    log('missing budget', result);
    expect(result.violations.map((v) => v.message)).toEqual(['pay ran 2 times (call-1, call-2), more than 1']);
    // A reply makes each distinct call once, so the second payment is the next round's.
    expect(labels(result, 'pay runs at most 1 time')).toEqual([
      'start',
      'reply: pay({"invoice":"x"})',
      'dispatch: call-1 runs (rule:allow:pay) ok',
      'compacted',
      'reply: pay({"invoice":"x"})',
      'dispatch: call-2 runs (rule:allow:pay) ok',
    ]);
    const fixed = await checkAgent({ ...agent, budget: { perTool: { pay: 1 } } }, { properties });
    expect(fixed.violations).toEqual([]);
    expect(fixed.exhaustive).toBe(true);
    // The dispatcher's budget is itself a built-in property of the fixed agent.
    expect(fixed.properties).toContain('budget.perTool.pay = 1 holds');
  });
});

describe('checkAgent: code enters as the answers it can give', () => {
  const policy = () => undefined;

  it("a policy function that may answer allow lets delete_file run without approval (the policy's answers are branches)", async () => {
    const agent: CheckedAgent = { tools: [deleteFile], policy, limits: { maxIterations: 1 } };
    const properties = [neverWithoutApproval('delete_file')];
    const result = await checkAgent(agent, { properties });
    log('policy answers', result);
    const violation = result.violations.find((v) => v.property.startsWith('delete_file'));
    expect(violation?.path.at(-1)?.assumed).toEqual({ 'call-1': { hook: { kind: 'continue' }, policy: { kind: 'allow' } } });
    // The user's own list: this policy only ever denies or has no opinion.
    const own = await checkAgent(agent, { properties, policyAnswers: [{ kind: 'none' }, { kind: 'deny' }] });
    expect(own.violations).toEqual([]);
  });

  it('a before-hook that may rewrite an input into a denied one never makes it run (deny always wins)', async () => {
    const agent: CheckedAgent = {
      tools: [readFile],
      permissions: { deny: ['read_file:path=/etc/*'] },
      hooks: { before: [{ name: 'normalise', run: () => undefined }] },
      limits: { maxIterations: 1 },
    };
    const result = await checkAgent(agent, {
      hookAnswers: [{ kind: 'continue' }, { kind: 'approve' }, { kind: 'rewrite', input: { path: '/etc/passwd' } }],
      properties: [
        property('/etc is never read', (t) => !t.some((r) => r.attempts > 0 && JSON.stringify(r.input).includes('/etc/'))),
      ],
    });
    expect(result.violations).toEqual([]);
    expect(result.exhaustive).toBe(true);
  });
});

describe('the property vocabulary on traces', () => {
  const record = (callId: string, tool: string, ran: boolean, decision = 'allow'): CallRecord => ({
    turnId: 't',
    callId,
    tool,
    input: { path: 'x' },
    decision,
    source: decision === 'user_approved' ? 'user' : 'rule:allow:x',
    outcome: ran ? 'ok' : 'denied',
    durationMs: 0,
    attempts: ran ? 1 : 0,
  });
  const tools = ['a', 'b'];
  const traces = fc
    .array(fc.tuple(fc.constantFrom(...tools), fc.boolean(), fc.constantFrom('allow', 'user_approved', 'deny')), { maxLength: 8 })
    .map((entries) =>
      entries.map(([tool, ran, decision], i) => record(`call-${i + 1}`, tool, ran && decision !== 'deny', decision)),
    );
  const holds = (p: AgentProperty, trace: readonly CallRecord[]): boolean => p.check(trace) === undefined;

  it('atMostCalls, neverAfter and neverWithoutApproval say what they mean (numRuns 300, traces of up to 8 records)', () => {
    fc.assert(
      fc.property(traces, fc.nat(4), (trace, n) => {
        const runs = (tool: string) => trace.filter((r) => r.tool === tool && r.attempts > 0);
        expect(holds(atMostCalls('a', n), trace)).toBe(runs('a').length <= n);
        const firstB = trace.findIndex((r) => r.tool === 'b' && r.attempts > 0);
        expect(holds(neverAfter('a', 'b'), trace)).toBe(
          firstB === -1 || !trace.slice(firstB + 1).some((r) => r.tool === 'a' && r.attempts > 0),
        );
        expect(holds(neverWithoutApproval('a'), trace)).toBe(runs('a').every((r) => r.decision === 'user_approved'));
      }),
      { numRuns: 300, seed: 7 },
    );
  });

  it('the built-in properties catch a denied input that ran and a call recorded twice', () => {
    const agent: CheckedAgent = { tools: [readFile], permissions: { deny: ['read_file:path=/etc/*'] } };
    const ranDenied = { ...record('call-1', 'read_file', true), input: { path: '/etc/passwd' } };
    expect(checkAgentTrace(agent, [ranDenied]).map((v) => v.property)).toEqual(['a denied input never runs']);
    const twice = [record('call-1', 'read_file', true), record('call-1', 'read_file', true)];
    expect(checkAgentTrace(agent, twice).map((v) => v.property)).toEqual(['one result per call']);
    expect(checkAgentTrace(agent, [record('call-1', 'read_file', true)])).toEqual([]);
  });

  it('a property that throws is reported broken, naming what it threw', () => {
    const throwing = property('throws', () => {
      throw new Error('boom');
    });
    expect(checkAgentTrace({ tools: [readFile] }, [], [throwing])).toEqual([
      { property: 'throws', message: 'the property threw: boom' },
    ]);
  });
});

describe('checkAgent: bad options are refused, naming the option', () => {
  const agent: CheckedAgent = { tools: [readFile] };
  it.each([
    [{ maxCallsPerReply: 0 }, /maxCallsPerReply must be a whole number ≥ 1, got 0/],
    [{ maxDepth: 1.5 }, /maxDepth must be a whole number ≥ 1, got 1.5/],
    [{ puritySample: -1 }, /puritySample must be a whole number ≥ 1, got -1/],
    [{ properties: [42] }, /properties\[0\] is not a property/],
    [{ hookAnswers: [] }, /hookAnswers must be a non-empty array/],
    [{ policyAnswers: [{ kind: 'maybe' }] }, /policyAnswers\[0\] must be \{ kind \} with kind one of none, allow, ask, deny/],
    [{ hookAnswers: [{ kind: 'rewrite' }] }, /hookAnswers\[0\] rewrites to no input/],
  ])('%j', async (options, message) => {
    await expect(checkAgent(agent, options as never)).rejects.toThrow(message);
  });

  it('a tool that is not a tool is refused by the dispatcher’s own check', async () => {
    await expect(checkAgent({ tools: [{ name: 'x' } as never] })).rejects.toThrow(/not a tool: make every entry with defineTool/);
  });
});

describe('checkAgent: a broken reducer is caught by the composition checks', () => {
  /** As in mutation.test.ts: parked calls run at once, approved on the person's behalf. */
  const executesParked: StepFunction = (state, event) => {
    const [next, effects] = step(state, event);
    if (!(state.status === 'dispatching' && next.status === 'awaiting_approval') || next.batch === null) return [next, effects];
    const calls = next.batch.parked.map((p) => p.call);
    const decisions = Object.fromEntries(calls.map((c) => [c.id, { type: 'approve' } as const]));
    return [
      { ...next, status: 'executing_approved', batch: { ...next.batch, decisions } },
      [...effects, { type: 'execute_approved', calls }],
    ];
  };

  it('a parked delete_file that runs without a decision breaks invariant 8 on the shortest path', async () => {
    const result = await checkAgent(
      { tools: [deleteFile], limits: { maxIterations: 1 } },
      { step: executesParked, properties: [neverWithoutApproval('delete_file')] },
    );
    const violation = result.violations.find((v) => v.property === 'invariant 8');
    expect(violation?.message).toMatch(/executed without an approve decision/);
    expect(violation?.path.map((s) => s.label)).toEqual([
      'start',
      'reply: delete_file({"path":"x"})',
      'dispatch: call-1 waits for approval',
    ]);
  });
});
