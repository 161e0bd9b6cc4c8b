import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  measureStep,
  quantile,
  renderMarkdown,
  formatTerminal,
  runBench,
  timeTurns,
  verifyOutcome,
  type BenchReport,
  type BenchSystem,
} from '@turnkit/bench';
import { testLog } from '../../../test-log.ts';

// The heap figure needs a full GC; vitest does not run with --expose-gc, so expose it here.
function exposeGc(): () => void {
  if (typeof globalThis.gc === 'function') return globalThis.gc;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

describe('verifyOutcome', () => {
  it('accepts the scenario outcome, with numbers or numeric strings as tool results', () => {
    expect(() => verifyOutcome('a', { toolResults: [1, 2], text: 'done' })).not.toThrow();
    expect(() => verifyOutcome('b', { toolResults: ['1', '2'], text: 'done' })).not.toThrow();
  });

  it('rejects missing, extra or wrong tool results and a wrong text, naming the system', () => {
    expect(() => verifyOutcome('pi', { toolResults: [1], text: 'done' })).toThrow(/pi produced tool results \[1\]/);
    expect(() => verifyOutcome('pi', { toolResults: [1, 2, 3], text: 'done' })).toThrow(/pi produced/);
    expect(() => verifyOutcome('lg', { toolResults: ['1', 'Error: boom'], text: 'done' })).toThrow(/lg produced/);
    expect(() => verifyOutcome('oai', { toolResults: [1, 2], text: '' })).toThrow(/oai answered ""/);
  });
});

describe('timeTurns', () => {
  it('fails, naming the system, when a system does not produce the scenario outcome', async () => {
    const good: BenchSystem = { name: 'good', kind: 'peer', run: async () => ({ toolResults: [1, 2], text: 'done' }) };
    const lazy: BenchSystem = { name: 'lazy', kind: 'peer', run: async () => ({ toolResults: [], text: 'done' }) };
    await expect(timeTurns([good, lazy], { warmupTurns: 1, rounds: 1, turnsPerRound: 1 })).rejects.toThrow(/lazy produced tool results \[\]/);
  });

  it('interleaves rounds and keeps one sample per timed turn', async () => {
    const order: string[] = [];
    const system = (name: string): BenchSystem => ({
      name,
      kind: 'peer',
      run: async () => {
        order.push(name);
        return { toolResults: [1, 2], text: 'done' };
      },
    });
    const timings = await timeTurns([system('A'), system('B')], { warmupTurns: 1, rounds: 2, turnsPerRound: 2 });
    expect(order.join('')).toBe('A' + 'B' + 'AABB' + 'AABB');
    expect(timings.map((t) => t.samplesUs.length)).toEqual([4, 4]);
    expect(timings[0]?.ratio).toBe(1);
  });
});

describe('quantile', () => {
  it('is the nearest-rank sample', () => {
    const samples = [5, 1, 4, 2, 3, 6, 7, 8, 9, 10];
    expect(quantile(samples, 0.5)).toBe(5);
    expect(quantile(samples, 0.95)).toBe(10);
    expect(quantile([], 0.5)).toBeNaN();
  });
});

describe('measureStep', () => {
  it('drives step over the mixed scripts and counts every transition', () => {
    const figure = measureStep(10, 2);
    // 10 turns cycle through the 5 scripts (9 + 10 + 6 + 2 + 2 events) twice per batch.
    expect(figure.transitions).toBe(2 * 2 * (9 + 10 + 6 + 2 + 2));
    expect(figure.nsPerTransition).toBeGreaterThan(0);
  });
});

describe('pnpm bench --quick, in-process', () => {
  it('runs the turnkit systems on the scenario, verified, and produces every figure', async () => {
    const lines: string[] = [];
    const report: BenchReport = await runBench({
      quick: true,
      rounds: 2,
      turnsPerRound: 3,
      warmupTurns: 2,
      command: 'pnpm bench --quick',
      gc: exposeGc(),
      log: (line) => lines.push(line),
      figures: { suspendedTurns: 50, stepTurns: 20, streamDeltas: 200, exploreMaxIterations: 1, exploreMaxDepth: 12 },
    });
    testLog(formatTerminal(report));
    expect(report.turns.map((t) => [t.name, t.kind, t.verifiedTurns, t.samplesUs.length])).toEqual([
      ['turnkit runTurn', 'turnkit', 8, 6],
      ['turnkit streamTurn', 'turnkit', 8, 6],
    ]);
    expect(report.turns.every((t) => t.samplesUs.every((us) => us > 0))).toBe(true);
    expect(report.suspendedHeap.turns).toBe(50);
    expect(report.suspendedHeap.jsonBytesPerTurn).toBeGreaterThan(0);
    expect(report.step.transitions).toBeGreaterThan(0);
    expect(report.streaming.turnkitPerSecond).toBeGreaterThan(0);
    expect(report.streaming.aiSdkPerSecond).toBeUndefined();
    expect(report.explore.states).toBeGreaterThan(1);
    expect(lines.some((l) => l.includes('Installing'))).toBe(false);

    const doc = renderMarkdown(report);
    expect(doc).toContain(`- Node: ${process.version}`);
    expect(doc).toContain('- Command: `pnpm bench --quick`');
    expect(doc).toMatch(/\| turnkit streamTurn \| [\d.]+ \| [\d.]+ \| [\d.]+× \| 6 \|/);
    expect(doc).not.toContain('TODO');
  });
});
