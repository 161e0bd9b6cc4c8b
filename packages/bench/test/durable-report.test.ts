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
    statementsPerTurn: system === 'turnkit' ? 9 : 63,
    walBytesPerTurn: wal,
    storedBytesPerTurn: wal / 2,
    flushesPerTurn: flushes,
    workerCpuMsPerTurn: 3,
    otherCpuMsPerTurn: 2,
    cpuBusy: workers === 1 ? 0.5 : 0.95,
  }) satisfies ThroughputFigure;

const report: DurableReport = {
  throughput: [
    figure('turnkit', 1, 120, 7, 10_000),
    figure('langgraph', 1, 30, 9.5, 26_000),
    figure('turnkit', 4, 240, 5, 5_000),
    figure('langgraph', 4, 30, 9, 26_000),
  ],
  latency: [
    { system: 'turnkit', decisions: 100, p50Ms: 6, p99Ms: 20 },
    { system: 'langgraph', decisions: 100, p50Ms: 4, p99Ms: 18 },
  ],
};

describe('the durable comparison section', () => {
  it('computes the ratios from the figures and says which goal was met', () => {
    const r = durableRatios(report);
    // The smallest ratio over the worker counts: bytes at 1 process, speed at 1 process.
    expect(r.speed).toBe(4);
    expect(r.bytes).toBeCloseTo(2.6);
    expect(r.stored).toBeCloseTo(2.6);
    expect(r.scaling).toBe(2);
    expect(r.flushes).toBeCloseTo(9.5 / 7);
    expect(r.latency).toBe(1.5);
    const section = renderDurableSection(report, 'pnpm bench --durable --postgres URL', 2);
    expect(section).toContain('| turnkit workers (@turnkit/store) | 1 | 120.0 | 9.0 | 7.0 | 10,000 | 5,000 | 3.0 / 2.0 | 50% |');
    expect(section).toContain('LangGraph wrote at least 2.6× the WAL bytes and 2.6× the stored bytes\nper turn of turnkit');
    expect(section).toContain('turnkit ran at least 4.0× the turns per second (the smallest ratios');
    expect(section).toContain('the turns per second: not met and met in this run');
    expect(section).toContain('LangGraph flushed 1.4× as often per turn');
    expect(section).toContain("turnkit's p50 was 1.5× LangGraph's");
    expect(section).toContain('7 statements and');
    // Where scaling stops, from the CPU figures: 5 ms a turn on 2 cores is about 400 turns/s.
    expect(section).toContain('at\nfour they were 95% busy, and a turn cost 5.0 ms of CPU (3.0 in the workers');
    expect(section).toContain('allow about\n400 turns/s. The bottleneck is the CPU, of which Postgres takes 40%');
  });

  it('meets the bytes goal only when both WAL and stored bytes are 5× at every worker count', () => {
    const at = (wal4: number): DurableReport => ({
      ...report,
      throughput: [
        figure('turnkit', 1, 120, 7, 5_000),
        figure('langgraph', 1, 30, 9.5, 26_000),
        figure('turnkit', 4, 240, 5, wal4),
        figure('langgraph', 4, 60, 9, 26_000),
      ],
    });
    expect(renderDurableSection(at(5_000), 'cmd', 2)).toContain('the turns per second: met and met in this run');
    expect(renderDurableSection(at(5_500), 'cmd', 2)).toContain('the turns per second: not met and met in this run');
  });
});
