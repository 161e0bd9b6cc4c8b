// The durable-turns benchmark: it runs (a few turns, PGlite and, when TURNKIT_TEST_POSTGRES_URL is
// set, Postgres), its section renders, and `pnpm bench --write` keeps the section it does not write.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderStoreSection, STORE_END, STORE_START, withStoreSection } from '../src/store-report.ts';
import { runStoreBench } from '../src/store-bench.ts';
import { testLog } from '../../../test-log.js';

const POSTGRES_URL = process.env.TURNKIT_TEST_POSTGRES_URL || undefined;

describe('pnpm bench --store', () => {
  it(`measures turns through the store on PGlite${POSTGRES_URL === undefined ? ' (Postgres skipped: TURNKIT_TEST_POSTGRES_URL is not set)' : ' and Postgres'}`, async () => {
    const figures = await runStoreBench({
      turns: 3,
      ...(POSTGRES_URL ? { postgresUrl: POSTGRES_URL } : {}),
      log: () => undefined,
    });
    expect(figures.map((f) => f.backend)).toEqual(
      POSTGRES_URL ? ['PGlite (data directory)', 'Postgres'] : ['PGlite (data directory)'],
    );
    for (const f of figures) {
      // 7 statements per turn of the scenario (see the section's text), plus the worker's last empty claim and look for due turns.
      expect(f.statementsPerTurn).toBeGreaterThanOrEqual(7);
      expect(f.statementsPerTurn).toBeLessThan(8);
      expect(f.transactionsPerTurn).toBe(0);
      expect(f.payloadBytesPerTurn).toBeGreaterThan(1000);
      expect(f.walBytesPerTurn).toBeGreaterThan(0);
      expect(f.turnsPerSecond).toBeGreaterThan(0);
      if (f.backend === 'Postgres' && f.walParts !== undefined) {
        // The parts are the WAL measured: the store's own records.
        const sum = Object.values(f.walParts).reduce((a, b) => a + b, 0);
        expect(sum).toBeCloseTo(f.walBytesPerTurn, 6);
        expect(f.walParts['turn rows']).toBeGreaterThan(0);
      }
    }
    testLog(renderStoreSection(figures, 'test'));
  }, 120_000);

  it('the section goes before "## Reproduce", replaces itself, and `pnpm bench --write` keeps it', () => {
    const page = '# Benchmarks\n\n## Time per turn\n\n## Reproduce\n';
    const first = `${STORE_START}\n## Durable turns\nfirst\n${STORE_END}`;
    const second = `${STORE_START}\n## Durable turns\nsecond\n${STORE_END}`;
    const written = withStoreSection(page, first);
    expect(written).toBe(`# Benchmarks\n\n## Time per turn\n\n${first}\n\n## Reproduce\n`);
    expect(withStoreSection(written, second)).toBe(`# Benchmarks\n\n## Time per turn\n\n${second}\n\n## Reproduce\n`);
    expect(withStoreSection(page, '')).toBe(page);
  });

  it('docs/benchmarks.md has the section, measured on PGlite and on Postgres', () => {
    const doc = readFileSync(new URL('../../../docs/benchmarks.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf(STORE_START), doc.indexOf(STORE_END));
    expect(section).toMatch(/\n\| PGlite \(data directory\) \| [\d.]+ \|/);
    expect(section).toMatch(/\n\| Postgres \| [\d.]+ \|/);
    // The command as it was typed (flags in any order), the Postgres URL masked.
    const command = section.match(/- Command: `([^`]*)`/)?.[1] ?? '';
    expect(command.startsWith('pnpm bench ')).toBe(true);
    expect(command.split(' ').sort()).toEqual(['--postgres', '--store', '--write', 'URL', 'bench', 'pnpm']);
  });
});
