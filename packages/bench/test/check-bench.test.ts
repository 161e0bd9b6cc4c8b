// `pnpm bench --check`: its section renders from figures, replaces itself in the page, and the page
// has it, written by the command it names. The explorations themselves are timed only by the bench.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { exploreTurn } from '@turnkit/check';
import {
  bareExploration,
  CHECK_MARKERS,
  renderCheckSection,
  withCheckSection,
  type CheckBenchFigures,
} from '../src/check-bench.ts';

const FIGURES: CheckBenchFigures = {
  stepNs: 1000,
  loadAverage: 1,
  runs: [
    {
      limits: { maxIterations: 2 },
      puritySample: 1,
      workers: 1,
      finished: true,
      states: 100,
      nodes: 120,
      transitions: 1000,
      depth: 10,
      seconds: 2,
      cpuSeconds: 1,
      heapBytesPerNode: 500,
      storedBytesPerNode: 40,
    },
    {
      limits: { maxIterations: 3 },
      puritySample: 1,
      workers: 2,
      finished: false,
      states: 5000,
      nodes: 0,
      transitions: 0,
      depth: 12,
      seconds: 60,
      cpuSeconds: 59,
      heapBytesPerNode: 0,
      storedBytesPerNode: 0,
    },
  ],
};

describe('pnpm bench --check', () => {
  it('renders states/s and transitions/s by wall and CPU clock, CPU per transition in steps, bytes per node, and the largest bounds done in a minute', () => {
    const section = renderCheckSection(FIGURES, 'pnpm bench --check --write');
    expect(section).toContain(
      '| maxIterations 2 | every edge | 1 | 100 / 120 | 1,000 | 2.0 s (1.0 s) | 50 (100) | 500 (1,000) | 1000.0 | 40 | 500 |',
    );
    expect(section).toContain('| maxIterations 3 | every edge | 2 | stopped after a minute at depth 12 | — |');
    expect(section).toContain(
      'Largest bounds of these that finish in a minute: maxIterations 2 (1,000 transitions) with every check',
    );
    expect(section).toContain('One `step` costs 1,000 ns');
  });

  it("renders checkAgent's runs on the files agent when there are some", () => {
    const run = { maxIterations: 3, states: 2000, transitions: 6000, seconds: 2, cpuSeconds: 3, heapBytesPerNode: 700 };
    const section = renderCheckSection({ ...FIGURES, agentRuns: [run] }, 'pnpm bench --check --write');
    expect(section).toContain('| 3 | 2,000 | 6,000 | 2.0 s (3.0 s) | 3,000 (2,000) | 700 |');
    expect(renderCheckSection(FIGURES, 'pnpm bench --check --write')).not.toContain('`checkAgent`');
  });

  it('renders the loop alone beside the one-thread explorations of its bounds, and the rate two cores would give it', () => {
    const bare = { limits: FIGURES.runs[0]!.limits, states: 100, transitions: 800_000, seconds: 0.5, cpuSeconds: 0.4 };
    const section = renderCheckSection({ ...FIGURES, bare }, 'pnpm bench --check --write');
    expect(section).toContain('0.50 µs of CPU an edge, 2,000,000 transitions a CPU second, against 1000.00 µs with every check');
    expect(section).toContain('shared perfectly between two cores, 4,000,000 transitions/s.');
    expect(renderCheckSection(FIGURES, 'pnpm bench --check --write')).not.toContain('loop alone');
  });

  it("the loop alone meets the exploration's distinct states (maxIterations 1 and 2)", () => {
    for (const limits of [
      { maxIterations: 1, loopThreshold: 0 },
      { maxIterations: 2, loopThreshold: 2, maxOutputRepairs: 1 },
    ]) {
      const bare = bareExploration(limits, () => {});
      const explored = exploreTurn({ limits, maxDepth: 80, puritySample: 16 });
      expect(explored.exhaustive).toBe(true);
      expect(bare.states).toBe(explored.states);
      expect(bare.transitions).toBeGreaterThan(0);
    }
  });

  it('replaces its own section and keeps the rest of the page', () => {
    const page = '# Benchmarks\n\n## Time per turn\n\n## Reproduce\n';
    const first = `${CHECK_MARKERS.start}\nfirst\n${CHECK_MARKERS.end}`;
    const second = `${CHECK_MARKERS.start}\nsecond\n${CHECK_MARKERS.end}`;
    const written = withCheckSection(page, first);
    expect(written).toBe(`# Benchmarks\n\n## Time per turn\n\n${first}\n\n## Reproduce\n`);
    expect(withCheckSection(written, second)).toBe(`# Benchmarks\n\n## Time per turn\n\n${second}\n\n## Reproduce\n`);
    expect(withCheckSection(page, null)).toBe(page);
  });

  it('docs/benchmarks.md has the section, with the command that wrote it', () => {
    const doc = readFileSync(new URL('../../../docs/benchmarks.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf(CHECK_MARKERS.start), doc.indexOf(CHECK_MARKERS.end));
    expect(section).toContain('Measured by `pnpm bench --check --write`');
    expect(section).toMatch(
      /\n\| maxIterations 2, loopThreshold 2, maxOutputRepairs 1 \| every edge \| 1 \| 15,131 \/ [\d,]+ \| 73,224 \|/,
    );
  });
});
