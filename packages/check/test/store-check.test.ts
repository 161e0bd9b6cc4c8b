// The durable protocol's model check: the explorations of `turnkit check --store` are exhaustive
// and clean, each planted mutant is caught by its invariant, the figures in docs/model-checking.md
// are what the command writes, and the guide's example prints what the page shows.

import { readFileSync } from 'node:fs';
import { format } from 'node:util';
import {
  exploreStore,
  PROTOCOL_MUTANTS,
  runStoreChecks,
  STORE_CHECK_MARKERS,
  STORE_CHECKS,
  storeCheckPassed,
  storeCheckSection,
  type StoreCheckReport,
} from '@turnkit/check/internal';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { testLog } from '../../../test-log.ts';

const doc = (): string => readFileSync(new URL('../../../docs/model-checking.md', import.meta.url), 'utf8');

describe('the model check of the durable protocol (the bounds are STORE_CHECKS: 2 workers, 1–2 turns, 1 death, 0–1 pauses, 0–1 retries, 0–1 cancels, a thread of 2 turns)', () => {
  let report: StoreCheckReport;
  beforeAll(() => {
    report = runStoreChecks();
    for (const { spec, result } of report.explorations)
      testLog(
        `${spec.name}: ${result.states} states, ${result.transitions} transitions, depth ${result.depth}, ${result.ended} ended, ${result.ms} ms`,
      );
    for (const { mutant, result } of report.mutants)
      testLog(`mutant '${mutant.name}': ${result.states} worlds, ${result.violations.map((v) => v.invariant).join(', ')}`);
  });

  it('explores every reachable world of each bound with no violation, and every world can still end', () => {
    expect(report.explorations.map((e) => e.spec.name)).toEqual(STORE_CHECKS.map((s) => s.name));
    for (const { spec, result } of report.explorations) {
      expect(result.exhaustive, spec.name).toBe(true);
      expect(result.violations, spec.name).toEqual([]);
      expect(result.deadlocked, spec.name).toBe(0);
      expect(result.ended, spec.name).toBeGreaterThan(0);
      // Two workers and a death: far more than one straight run of the turn.
      expect(result.states, spec.name).toBeGreaterThan(1_000);
    }
    expect(storeCheckPassed(report)).toBe(true);
  });

  it('catches each planted mutant by the invariant it names', () => {
    expect(report.mutants.map((m) => m.mutant.invariant).sort()).toEqual([1, 3, 4, 5, 6, 7]);
    for (const { mutant, result, caught } of report.mutants) {
      expect(caught, mutant.name).toBe(true);
      const found = result.violations.find((v) => v.invariant === mutant.invariant);
      expect(found?.path.length, mutant.name).toBeGreaterThan(0);
    }
  });

  it('finds a shortest counterexample for each mutant', () => {
    const path = (name: string): string =>
      report.mutants.find((m) => m.mutant.name === name)?.result.violations[0]?.path.join(' → ') ?? '';
    expect(path('skip the fence check on a write')).toBe(
      "w0 claims t1 → w0 reads t1's journal → t1's lease expires under a paused worker → w1 claims t1 → w0 commits t1 dispatching unfenced with the start of t1/plain",
    );
    expect(path('re-dispatch a call without a journaled result')).toMatch(
      /w0 runs t1\/plain's tool → .* w1 runs t1\/plain's tool$/,
    );
    expect(path('take over a lease that has not expired')).toMatch(/w1 claims t1 → .*w1 journals interrupted for t1\/plain$/);
    expect(path('apply an inbox row twice')).toMatch(/user approves t1\/parked → .*w0 commits t1 done at token 1$/);
    expect(path('never take over an expired lease')).toBe('w0 claims t1 → w0 dies');
    expect(path("run a thread's turns at once")).toMatch(
      /w0 commits t1 awaiting_approval at token 1 → user submits t2 → w1 claims t2$/,
    );
  });

  it("docs/model-checking.md's figures are what `turnkit check --store --write` writes", () => {
    const page = doc();
    const start = page.indexOf(STORE_CHECK_MARKERS.start);
    const end = page.indexOf(STORE_CHECK_MARKERS.end) + STORE_CHECK_MARKERS.end.length;
    expect(start).toBeGreaterThan(-1);
    expect(page.slice(start, end)).toBe(storeCheckSection(report));
  });
});

describe('a safety invariant broken on one edge is reported with its shortest path', () => {
  it('the mutant without the fence reaches a second writer at token 2 in five steps', () => {
    const mutant = PROTOCOL_MUTANTS.find((m) => m.invariant === 4);
    const config = STORE_CHECKS[0]?.config;
    if (mutant === undefined || config === undefined) throw new Error('missing mutant or check');
    const result = exploreStore({ config, protocol: mutant.protocol, stopAt: 4 });
    expect(result.exhaustive).toBe(false);
    expect(result.violations[0]?.path).toHaveLength(5);
    expect(result.violations[0]?.message).toBe('worker w0 wrote turn t1 at token 2, which w1 also wrote at.');
  });
});

describe('examples/check-protocol.ts (the example in docs/model-checking.md)', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('prints what the page shows, and the page shows the example verbatim', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void lines.push(format(...args)));
    await import('../examples/check-protocol.ts');
    const section = doc().split('**Exploring other worlds.**')[1] ?? '';
    expect(section.match(/It prints:\n\n```text\n([\s\S]*?)```/)?.[1]).toBe(`${lines.join('\n')}\n`);
    const example = readFileSync(new URL('../examples/check-protocol.ts', import.meta.url), 'utf8');
    expect(section.match(/```ts\n([\s\S]*?)```/)?.[1]).toBe(example);
  });
});
