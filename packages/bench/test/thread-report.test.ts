// The thread comparison's section: the growth it states comes from the figures; the user message is 500 bytes.
import { describe, expect, it } from 'vitest';
import { type ThreadFigure, userMessage } from '../src/thread-bench.js';
import { renderThreadSection, THREAD_END, THREAD_START } from '../src/thread-report.js';

const figure = (system: 'turnkit' | 'langgraph', firstWal: number, lastWal: number): ThreadFigure => ({
  system,
  turns: 500,
  first: { from: 1, to: 10, walBytesPerTurn: firstWal, storedBytesPerTurn: 4096, msPerTurn: 30, messageBytesPerTurn: 2048 },
  last: { from: 491, to: 500, walBytesPerTurn: lastWal, storedBytesPerTurn: 4096, msPerTurn: 60, messageBytesPerTurn: 2048 },
  loadMs: 12.5,
  contextMessages: 2000,
  storedBytes: 3 * 1024 * 1024,
  wal: 'database',
});

describe('the thread comparison section', () => {
  it('shows each window and computes the growth of a turn’s WAL from turns 1–10 to the last ten', () => {
    const section = renderThreadSection(
      [figure('turnkit', 5120, 5120), figure('langgraph', 20_480, 204_800)],
      'pnpm bench --durable --thread --postgres URL --write',
      '2 cores',
      1.5,
      new Date('2026-11-27T00:00:00Z'),
    );
    expect(section.startsWith(THREAD_START)).toBe(true);
    expect(section.endsWith(THREAD_END)).toBe(true);
    expect(section).toContain('| turnkit store, `submit({ thread })` | 491–500 | 5,120 | 2,048 | 2.50 | 4.0 KB | 60.0 |');
    expect(section).toContain(
      '| LangChain createAgent + LangGraph PostgresSaver, one thread_id | 1–10 | 20,480 | 2,048 | 10.00 | 4.0 KB | 30.0 |',
    );
    expect(section).toContain("turnkit's WAL per byte of a turn's new messages: 2.50 at turns 1–10, 2.50 at turns 491–500.");
    expect(section).toContain('load average 1.50 on');
    expect(section).toContain("WAL bytes are the run database's own");
    expect(section).toContain('turns 491–500: turnkit 1.0×, LangGraph 10.0×.');
    expect(section).toContain('| 2,000 | 12.5 | 3.0 MB |');
  });

  it('a user message is 500 bytes', () => {
    expect(Buffer.byteLength(userMessage(1))).toBe(500);
    expect(Buffer.byteLength(userMessage(500))).toBe(500);
  });
});
