import { describe, expect, it } from 'vitest';
import { compareOutcome } from '../src/run-scenario.ts';
import { scenarios } from '@turnkit/testing';
import { runScenario, type ConformanceRun } from '@turnkit/testing/internal';
import { runMinimal } from '../examples/minimal-interpreter.js';
import { testLog } from '../../../test-log.ts';

describe('the conformance corpus', () => {
  it('has at least 25 scenarios with unique names', () => {
    testLog(`conformance scenarios: ${scenarios.length}`);
    expect(scenarios.length).toBeGreaterThanOrEqual(25);
    expect(new Set(scenarios.map((s) => s.name)).size).toBe(scenarios.length);
  });

  it('covers every case the issue lists', () => {
    const names = scenarios.map((s) => s.name).join('\n');
    for (const want of [
      'plain answer',
      'tool round',
      'parallel',
      'unknown tool',
      'invalid arguments',
      'max iterations',
      'loop detected',
      'budget',
      'approval: approve',
      'approval: reject',
      'approval: expire',
      'suspend and resume',
      'output repair',
      'model failure',
      'cancel mid-tool',
      'hook stop',
      'model override',
    ]) {
      expect(names).toContain(want);
    }
  });

  it('fails an interpreter that loses a message, naming the scenario and the line', async () => {
    const lossy: ConformanceRun = async (options) => {
      const result = await runMinimal(options);
      return { ...result, transcript: result.transcript.slice(0, -1) };
    };
    const scenario = scenarios.find((s) => s.name === 'one tool round')!;
    await expect(runScenario(scenario, lossy)).rejects.toThrow(
      /Scenario 'one tool round'[\s\S]*transcript line 4: expected assistant: 1 \+ 2 = 3, got no line/,
    );
  });

  it('fails an interpreter that ignores the dispatcher loop-exempt tools', async () => {
    const forgetful: ConformanceRun = (options) =>
      runMinimal({ ...options, tools: { ...options.tools, loopExemptTools: () => [] } });
    const scenario = scenarios.find((s) => s.name === 'loop-exempt tool')!;
    await expect(runScenario(scenario, forgetful)).rejects.toThrow(/stopReason: expected "completed", got "loop_detected"/);
  });
});

describe('compareOutcome', () => {
  const result = {
    status: 'stopped' as const,
    output: 'x',
    text: 'x',
    stopReason: 'completed' as const,
    state: {},
    transcript: [{ role: 'user' as const, content: 'hi' }],
  };

  it('accepts a match, with RegExp lines', () => {
    expect(compareOutcome(result, { status: 'stopped', stopReason: 'completed', output: 'x', transcript: [/^user: h/] })).toEqual(
      [],
    );
  });

  it('lists each difference', () => {
    const problems = compareOutcome(result, { status: 'failed', errorKind: 'boom', output: 'y', transcript: ['user: bye'] });
    expect(problems).toHaveLength(4);
    expect(problems[0]).toBe('status: expected "failed", got "stopped"');
  });
});
