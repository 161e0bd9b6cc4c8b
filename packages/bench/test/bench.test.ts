import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  checkTargets,
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
    await expect(timeTurns([good, lazy], { warmupTurns: 1, rounds: 1, turnsPerRound: 1 })).rejects.toThrow(
      /lazy produced tool results \[\]/,
    );
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
    expect(formatTerminal(report)).toMatch(/^`step` per transition .* not comparable \(--quick: not warmed up\)$/m);
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

describe('targets', () => {
  // A run that misses every timing target and meets the heap one.
  const slow = (quick: boolean): BenchReport => ({
    date: '2025-01-01',
    node: 'v20.19.0',
    cpu: 'test CPU',
    load: { average: 0, cores: 2 },
    command: quick ? 'pnpm bench --quick' : 'pnpm bench',
    quick,
    turns: [
      { name: 'turnkit runTurn', kind: 'turnkit', medianUs: 100, p95Us: 120, ratio: 1, samplesUs: [100], verifiedTurns: 2 },
      ...(quick
        ? []
        : [{ name: 'peer', kind: 'peer' as const, medianUs: 200, p95Us: 220, ratio: 2, samplesUs: [200], verifiedTurns: 2 }]),
    ],
    suspendedHeap: { turns: 10, bytesPerTurn: 1000, jsonBytesPerTurn: 500 },
    step: { transitions: 100, turns: 10, nsPerTransition: 1546 },
    streaming: { deltas: 100, turnkitPerSecond: 10_000 },
    explore: { limits: 'test', states: 2, transitions: 1, seconds: 1, statesPerSecond: 2 },
  });
  // The targets table comes last in the terminal output.
  const lineOf = (text: string, name: string): string =>
    text.split('\n').findLast((line) => line.startsWith(name)) ?? `no line starting ${name}`;

  it('in a --quick run, marks timing targets not comparable instead of met or missed', () => {
    const report = slow(true);
    expect(checkTargets(report).map((c) => [c.name, c.verdict])).toEqual([
      ['turnkit inline vs the fastest peer', 'not measured'],
      ['`step` per transition', 'not comparable'],
      ['streaming throughput', 'not comparable'],
      ['heap per suspended turn', 'met'],
    ]);
    const terminal = formatTerminal(report);
    expect(terminal).not.toContain('MISSED');
    expect(lineOf(terminal, '`step` per transition')).toMatch(/1,546 ns {2}not comparable \(--quick: not warmed up\)$/);
    expect(lineOf(terminal, 'streaming throughput')).toMatch(/not comparable \(--quick: not warmed up\)$/);
    expect(lineOf(terminal, 'heap per suspended turn')).toMatch(/ met$/);
    expect(renderMarkdown(report)).toContain(
      '| `step` per transition | ≤ 300 ns | 1,546 ns | not comparable (--quick: not warmed up) |',
    );
  });

  it('in a full run, reports a missed timing target as missed', () => {
    const report = slow(false);
    expect(checkTargets(report).map((c) => c.verdict)).toEqual(['missed', 'missed', 'missed', 'met']);
    expect(lineOf(formatTerminal(report), '`step` per transition')).toMatch(/1,546 ns {2}MISSED$/);
    expect(renderMarkdown(report)).toContain('| `step` per transition | ≤ 300 ns | 1,546 ns | **missed** |');
  });
});
