// The durable comparison's section: the ratios, the goals and the bounds come from the figures.
import { describe, expect, it } from 'vitest';
import { durableRatios, renderDurableSection } from '../src/durable-report.js';
import type { DurableReport, ThroughputFigure } from '../src/durable.js';

const figure = (system: 'turnkit' | 'langgraph', workers: number, turnsPerSecond: number, flushes: number, wal: number) =>
  ({
    system,
    workers,
    turns: 200,
    turnsPerSecond,
    statementsPerTurn: system === 'turnkit' ? 11 : 63,
    walBytesPerTurn: wal,
    storedBytesPerTurn: wal / 2,
    flushesPerTurn: flushes,
  }) satisfies ThroughputFigure;

const report: DurableReport = {
  throughput: [
    figure('turnkit', 1, 120, 7, 10_000),
    figure('langgraph', 1, 30, 9.5, 26_000),
    figure('turnkit', 4, 240, 5, 10_000),
    figure('langgraph', 4, 60, 9, 26_000),
  ],
  latency: [
    { system: 'turnkit', decisions: 100, p50Ms: 6, p99Ms: 20 },
    { system: 'langgraph', decisions: 100, p50Ms: 4, p99Ms: 18 },
  ],
};

describe('the durable comparison section', () => {
  it('computes the ratios from the figures and says which goal was met', () => {
    const r = durableRatios(report);
    expect(r.speed).toBe(4);
    expect(r.bytes).toBeCloseTo(2.6);
    expect(r.scaling).toBe(2);
    expect(r.flushes).toBeCloseTo(9.5 / 7);
    expect(r.latency).toBe(1.5);
    const section = renderDurableSection(report, 'pnpm bench --durable --postgres URL', 2);
    expect(section).toContain('| turnkit workers (@turnkit/store) | 1 | 120.0 | 11.0 | 7.0 | 10,000 | 5,000 |');
    expect(section).toContain('LangGraph wrote 2.6× the WAL bytes per turn of turnkit');
    expect(section).toContain('turnkit ran 4.0× the turns per second');
    expect(section).toContain('the turns per second: not met and met in this run');
    expect(section).toContain('LangGraph flushed 1.4× as often per turn');
    expect(section).toContain("turnkit's p50 was 1.5× LangGraph's");
  });
});
