// The thread comparison's section of docs/benchmarks.md (`pnpm bench --durable --thread --postgres
// URL --write` rewrites it; the other commands keep it) and its terminal table.
import { availableParallelism, loadavg } from 'node:os';
import { type Markers, writeSection } from './doc-sections.js';
import { THREAD_SYSTEM_NAMES, type ThreadFigure } from './thread-bench.js';

export const THREAD_START = '<!-- thread section: written by `pnpm bench --durable --thread --postgres URL --write` -->';
export const THREAD_END = '<!-- end of thread section -->';
/** Where the thread section lies in docs/benchmarks.md. */
export const THREAD: Markers = { start: THREAD_START, end: THREAD_END };

const n0 = (n: number): string => Math.round(n).toLocaleString('en-US');
const n1 = (n: number): string => n.toFixed(1);
const n2 = (n: number): string => (Number.isFinite(n) ? n.toFixed(2) : '–');
const kb = (n: number): string => `${n1(n / 1024)} KB`;

function table(figures: readonly ThreadFigure[]): string {
  const rows = figures.flatMap((f) =>
    [f.first, f.last].map(
      (w) =>
        `| ${THREAD_SYSTEM_NAMES[f.system]} | ${w.from}–${w.to} | ${n0(w.walBytesPerTurn)} | ${n0(w.messageBytesPerTurn)} | ${n2(w.walBytesPerTurn / w.messageBytesPerTurn)} | ${kb(w.storedBytesPerTurn)} | ${n1(w.msPerTurn)} |`,
    ),
  );
  return [
    '| system | turns | WAL bytes per turn | new message bytes per turn | WAL per message byte | stored per turn | ms per turn (median) |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
}

function loadTable(figures: readonly ThreadFigure[]): string {
  return [
    '| system | messages in the context | ms to load it (median of 20) | stored in all |',
    '| --- | ---: | ---: | ---: |',
    ...figures.map(
      (f) =>
        `| ${THREAD_SYSTEM_NAMES[f.system]} | ${n0(f.contextMessages)} | ${n1(f.loadMs)} | ${n1(f.storedBytes / 1024 / 1024)} MB |`,
    ),
  ].join('\n');
}

export function formatThreadTerminal(figures: readonly ThreadFigure[]): string {
  return `${table(figures)}\n\n${loadTable(figures)}`;
}

/** The section (markers included): the command, the tables, and what the figures say, computed. */
export function renderThreadSection(
  figures: readonly ThreadFigure[],
  command: string,
  setting: string,
  load: number = loadavg()[0] ?? Number.NaN,
  date = new Date(),
): string {
  const tk = figures.find((f) => f.system === 'turnkit');
  const lg = figures.find((f) => f.system === 'langgraph');
  const growth = (f: ThreadFigure | undefined): string =>
    f === undefined ? 'n/a' : `${n1(f.last.walBytesPerTurn / f.first.walBytesPerTurn)}×`;
  const perByte = (w: ThreadFigure['first'] | undefined): string =>
    w === undefined ? 'n/a' : n2(w.walBytesPerTurn / w.messageBytesPerTurn);
  const turns = tk?.turns ?? lg?.turns ?? 0;
  const walNote = figures.every((f) => f.wal === 'database')
    ? "WAL bytes are the run database's own (pg_waldump over each window's stretch of the log, counting the records of its tables and indexes and of the transactions that wrote them: other databases on the server and the system catalogs' upkeep, autovacuum's statistics among it, do not count)"
    : "WAL bytes are the whole server's log growth over each window (pg_waldump was not at hand): other databases' writes are included";
  return [
    THREAD_START,
    '## A long conversation: one thread of many turns',
    '',
    `\`${command}\`: one thread of ${turns} turns on one Postgres (${setting}), each turn a 500-byte user`,
    'message, one tool call whose output is 2 KB, and an answer; turnkit submits each turn with',
    '`store.submit({ agent, input, thread })` and one worker runs it, LangChain `createAgent` invokes',
    "each on LangGraph's `PostgresSaver` with the same `thread_id`, both in a database made for the run.",
    `Nothing is compacted on either side. ${walNote}; stored bytes are the growth of the system's schema;`,
    "new message bytes are the turn's messages as JSON (turnkit's transcript of the turn: the user",
    "message, the model's call, the tool's result and the answer; the same messages on both sides). A",
    "turn's time runs from submit (or `invoke`) to its answer; loading the context is what the thread's",
    'next turn starts from (turnkit: the read a claim makes; LangGraph: `checkpointer.getTuple`).',
    '',
    `- Date: ${date.toISOString().slice(0, 10)}; Node ${process.version}; load average ${load.toFixed(2)} on ${availableParallelism()} cores when the run ended`,
    '  (other work on the machine moves the times; the bytes it does not)',
    '',
    table(figures),
    '',
    loadTable(figures),
    '',
    `turnkit's WAL per byte of a turn's new messages: ${perByte(tk?.first)} at turns 1–10, ${perByte(tk?.last)} at turns ${tk?.last.from ?? ''}–${tk?.last.to ?? ''}.`,
    `A turn's write-ahead log from turns 1–10 to turns ${tk?.last.from ?? ''}–${tk?.last.to ?? ''}: turnkit ${growth(tk)}, LangGraph ${growth(lg)}.`,
    "turnkit writes only the turn's new messages (its own log rows); LangGraph writes the whole message list",
    'at each checkpoint. The context a turn loads grows with the thread on both sides while nothing is',
    "compacted; an agent's `compact` bounds turnkit's ([conversations](conversations.md#the-context-what-a-turn-starts-from)).",
    THREAD_END,
  ].join('\n');
}

export const writeThreadSection = (section: string): string => writeSection(section, THREAD);
