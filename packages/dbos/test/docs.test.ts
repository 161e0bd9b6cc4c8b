// docs/durable-engines.md's example (packages/dbos/examples/dbos.ts) runs against a real Postgres,
// prints what the page says it prints, and the page shows it verbatim.

import { readFileSync } from 'node:fs';
import { format } from 'node:util';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { dropDatabase, freshDatabase, POSTGRES_URL, WHY_SKIPPED } from './postgres.js';

const PAGE = new URL('../../../docs/durable-engines.md', import.meta.url);
const SECTION = '## A turn on DBOS\n';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('docs/durable-engines.md', () => {
  it('shows examples/dbos.ts verbatim', () => {
    const section = readFileSync(PAGE, 'utf8').split(SECTION)[1] ?? '';
    const example = readFileSync(new URL('../examples/dbos.ts', import.meta.url), 'utf8');
    expect(section.match(/```ts\n([\s\S]*?)```/)?.[1]).toBe(example);
  });

  describe.skipIf(POSTGRES_URL === undefined)(
    `the example, run${POSTGRES_URL === undefined ? ` (skipped: ${WHY_SKIPPED})` : ''}`,
    () => {
      afterAll(async () => {
        await dropDatabase(process.env.DATABASE_URL);
      });

      it('parks a turn, takes a decision and finishes it, printing what the page shows', async () => {
        process.env.DATABASE_URL = await freshDatabase('docs');
        const lines: string[] = [];
        vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
          lines.push(format(...args));
        });
        await import('../examples/dbos.js');
        const printed = lines.join('\n').split('\n');
        expect(printed).toEqual([
          "awaiting_approval [ 'refund' ]",
          'user: Please refund order A-17.',
          'assistant: [call_1 refund]',
          'tool call_1 refund: ok "refunded A-17"',
          'assistant: Order A-17 is refunded.',
          'stopped {"status":"stopped","stopReason":"completed","output":"Order A-17 is refunded."}',
        ]);
        const shown = (readFileSync(PAGE, 'utf8').split(SECTION)[1] ?? '').match(/It prints:\n\n```text\n([\s\S]*?)```/)?.[1];
        expect(shown).toBe(`${printed.join('\n')}\n`);
      }, 60_000);
    },
  );
});
