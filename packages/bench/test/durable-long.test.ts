import { describe, expect, it } from 'vitest';
import { type LongReport, renderLongSection, walOfDatabase, walPartsOfDatabase } from '../src/durable-long.js';

// Lines as pg_waldump (Postgres 15) prints them.
const DUMP = [
  'rmgr: Heap        len (rec/tot):     54/    54, tx:        901, lsn: 0/01000028, prev 0/01000000, desc: INSERT off 3 flags 0x00, blkref #0: rel 1663/16384/16390 blk 0',
  'rmgr: Btree       len (rec/tot):     64/  8228, tx:        901, lsn: 0/01000060, prev 0/01000028, desc: INSERT_LEAF off 2, blkref #0: rel 1663/16384/16392 blk 1 FPW',
  'rmgr: Transaction len (rec/tot):     34/    34, tx:        901, lsn: 0/010020A0, prev 0/01000060, desc: COMMIT 2026-11-27 06:00:00.000000 UTC',
  'rmgr: Heap        len (rec/tot):     54/    54, tx:        902, lsn: 0/010020C8, prev 0/010020A0, desc: INSERT off 4 flags 0x00, blkref #0: rel 1663/5/16400 blk 0',
  'rmgr: Transaction len (rec/tot):     34/    34, tx:        902, lsn: 0/01002100, prev 0/010020C8, desc: COMMIT 2026-11-27 06:00:00.000001 UTC',
  'rmgr: XLOG        len (rec/tot):     49/  8237, tx:          0, lsn: 0/01002128, prev 0/01002100, desc: FPI_FOR_HINT , blkref #0: rel 1663/16384/16390 blk 7 FPW',
  'rmgr: Standby     len (rec/tot):     50/    50, tx:          0, lsn: 0/01004170, prev 0/01002128, desc: RUNNING_XACTS nextXid 903',
  // autovacuum's statistics (a system catalog, pg_statistic) and a catalog page pruned by a read: not counted
  'rmgr: Heap        len (rec/tot):    300/   300, tx:        903, lsn: 0/010041A8, prev 0/01004170, desc: UPDATE off 3 xmax 903, blkref #0: rel 1663/16384/2619 blk 3',
  'rmgr: Transaction len (rec/tot):     34/    34, tx:        903, lsn: 0/010042D8, prev 0/010041A8, desc: COMMIT 2026-11-27 06:00:00.000002 UTC',
  'rmgr: Heap2       len (rec/tot):     60/    60, tx:          0, lsn: 0/01004300, prev 0/010042D8, desc: PRUNE latestRemovedXid 0, blkref #0: rel 1663/16384/2618 blk 1',
].join('\n');

describe('the long-turn bench', () => {
  it("counts a database's WAL: its blocks' records and its transactions' commits, not another database's", () => {
    expect(walOfDatabase(DUMP, 16384)).toBe(54 + 8228 + 34 + 8237);
    expect(walOfDatabase(DUMP, 5)).toBe(54 + 34);
    expect(walOfDatabase(DUMP, 1)).toBe(0);
  });

  it("splits a database's WAL by relation and record type, page images apart", () => {
    const parts = walPartsOfDatabase(DUMP, 16384, new Map([['16390', 'turnkit_log']]));
    expect(Object.fromEntries(parts)).toEqual({
      'turnkit_log INSERT': 54,
      'relation 16392 INSERT_LEAF+page_image': 8228,
      'Transaction COMMIT': 34,
      'turnkit_log FPI_FOR_HINT+page_image': 8237,
    });
  });

  it('renders per turn and per round figures, and says what was left out', () => {
    const figure = (system: 'turnkit' | 'dbos' | 'langgraph', rounds: number, wal: number) => ({
      system,
      rounds,
      turns: 1,
      turnsPerSecond: 2,
      statementsPerTurn: 10 * Math.max(rounds, 2),
      commitsPerTurn: 5 * Math.max(rounds, 2),
      walBytesPerTurn: wal,
      storedBytesPerTurn: wal / 2,
    });
    const report: LongReport = {
      figures: [
        figure('turnkit', 0, 4000),
        figure('turnkit', 10, 30_720),
        {
          ...figure('turnkit', 1000, 3_072_000),
          walParts: { 'turnkit_tool_results HOT_UPDATE': 2_150_000, 'Transaction COMMIT': 102_000 },
        },
        figure('langgraph', 0, 2000),
      ],
      wal: 'database',
      skipped: ['LangGraph, 1000 rounds: too large'],
      load: 1.5,
    };
    const section = renderLongSection(
      report,
      'pnpm bench --durable --long --postgres URL --write',
      new Date('2026-11-27T00:00:00Z'),
    );
    // 30,720 WAL bytes over 10 rounds of 2,048-byte outputs: 1.50 per output byte; 3,072 per round.
    expect(section).toContain(
      '| turnkit workers (@turnkit/store) | 10 | 1 | 2.00 / 20.0 | 100.0 / 10.0 | 50.0 / 5.0 | 30,720 / 3,072 | 15,360 / 1,536 | 1.50 |',
    );
    expect(section).toContain('| turnkit workers (@turnkit/store) | scenario (2) |');
    expect(section).toContain('×1.00 WAL bytes per round');
    expect(section).toContain('load average 1.50 on');
    expect(section).toContain('- Left out: LangGraph, 1000 rounds: too large.');
    expect(section).toContain('the store ran 1.00× LangGraph');
    expect(section).toContain("Where a round's WAL goes in the store's 1,000-round turn");
    expect(section).toContain('| turnkit_tool_results HOT_UPDATE | 2,150 |');
    expect(section).toContain('(3,072 bytes in all, 2,048 of them');
  });
});
