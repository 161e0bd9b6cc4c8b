// The durable-turns section of docs/benchmarks.md: written by `pnpm bench --store --write`, kept as
// it is by `pnpm bench --write` (which rewrites the rest of the page).
import { cpus, loadavg } from 'node:os';
import { type Markers, withSection, writeSection } from './doc-sections.js';
import type { NewStoreFigure } from './new-store.js';
import type { StoreFigure } from './store-bench.js';

export const STORE_START = '<!-- store section: written by `pnpm bench --store --write` -->';
export const STORE_END = '<!-- end of store section -->';

const int = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
const one = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');

const HEADER = [
  'backend',
  'statements / turn',
  'writes / turn',
  'transactions / turn',
  'payload bytes / turn',
  'WAL bytes / turn',
  'stored bytes / turn',
  'turns/s, 1 at a time',
  'turns/s, 4 at a time',
];

function row(f: StoreFigure): string[] {
  return [
    f.backend,
    one(f.statementsPerTurn),
    one(f.writeStatementsPerTurn),
    one(f.transactionsPerTurn),
    int(f.payloadBytesPerTurn),
    int(f.walBytesPerTurn),
    int(f.storedBytesPerTurn),
    one(f.turnsPerSecond),
    one(f.turnsPerSecondConcurrent),
  ];
}

/** A new PGlite store's cost, as lines ('' when it was not measured). */
function newStoreLines(opening: readonly NewStoreFigure[], bullet: string): string {
  return opening
    .map((o) => `${bullet}${o.how}: ${int(o.wallMs)} ms wall, ${int(o.cpuMs)} ms CPU (median of ${o.runs})`)
    .join('\n');
}

export function formatStoreTerminal(figures: readonly StoreFigure[], opening: readonly NewStoreFigure[] = []): string {
  const parts = (f: StoreFigure): string =>
    f.walParts === undefined
      ? ''
      : `\nWAL by part: ${Object.entries(f.walParts)
          .map(([k, v]) => `${k} ${int(v)}`)
          .join(', ')}`;
  const flushes = (f: StoreFigure): string =>
    f.flushesPerTurn === undefined ? '' : `\nflushes / turn: ${one(f.flushesPerTurn)}`;
  const stores = figures.map((f) => HEADER.map((h, i) => `${h}: ${row(f)[i]}`).join('\n') + parts(f) + flushes(f)).join('\n\n');
  return opening.length === 0 ? stores : `${stores}\n\nA new PGlite store, in a fresh process:\n${newStoreLines(opening, '  ')}`;
}

/** What the WAL of a turn on Postgres was written for, measured (pg_walinspect), as doc text ('' when not measured). */
function walSection(figures: readonly StoreFigure[]): string {
  const f = figures.find((x) => x.walParts !== undefined);
  if (f?.walParts === undefined) return '';
  const parts = Object.entries(f.walParts).sort((a, b) => b[1] - a[1]);
  const rows = parts.map(([part, bytes]) => `  | ${part} | ${int(bytes)} | ${WAL_MEANS[part] ?? ''} |`).join('\n');
  const flushes =
    f.flushesPerTurn === undefined
      ? ''
      : ` The server flushed its log to disk ${one(f.flushesPerTurn)} times per turn (its count: other sessions' commits add to it).`;
  return `
- **What the WAL bytes are** on Postgres, per turn, by the relation each record changed (read
  back with \`pg_walinspect\`).${flushes}

  | part | WAL bytes / turn | what it is |
  | --- | ---: | --- |
${rows}`;
}

const WAL_MEANS: Readonly<Record<string, string>> = {
  'turn rows':
    "the turn row: its insert, the claim, 3 checkpoints each rewriting the lean state (the part of the row that changed: the claim logs its lease columns, a checkpoint `updated_at` through the state; updates are HOT, in place, but the end's), the pruning of its old versions, and the row lock of each fenced journal write",
  'log rows':
    "the transcript, notices and status changes of the checkpoints not written with a call's start: one row each, keyed by the turn's `seq`",
  'log index': 'one primary-key entry per log row (and its page splits)',
  'journal rows and index':
    "per tool call, the start (a new row and its key; the first call of a batch's row also keeps its checkpoint's log entries) and the result (an update in place)",
  'turn row indexes':
    'the turn row inserted (its id, seq and runnable entries) and the end (a new row version, no longer runnable: its id and seq entries again)',
  'commit records': 'one per statement that wrote (7)',
  inbox: 'decisions and cancels (none in this scenario)',
  other: 'page pruning, the id sequence, and the rest',
};

/** The section, markers included. */
export function renderStoreSection(
  figures: readonly StoreFigure[],
  command: string,
  opening: readonly NewStoreFigure[] = [],
): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  const postgres = figures.some((f) => f.backend === 'Postgres');
  return `${STORE_START}
## Durable turns (@turnkit/store)

The scenario above, each turn submitted to a store and run by one worker (\`createWorker\`, the
inline driver, a 30 s lease): 3 model calls, 2 tool calls, every checkpoint written as one
compare-and-swap, each tool call journaled before it runs and its result the moment it finishes.
Counted at the store's SQL seam over ${int(figures[0]?.turns ?? 0)} turns (after a warm-up), from \`submit\` to the
turn's end; every turn's tool results and answer are checked.

- Date: ${new Date().toISOString().slice(0, 10)}; Node ${process.version}; ${cpus()[0]?.model ?? 'unknown CPU'}; load average ${loadavg()[0]?.toFixed(2)} on ${cpus().length} cores
- Command: \`${command}\`${postgres ? '' : '\n- Postgres: not measured in this run (pass `--postgres URL`).'}

${line(HEADER)}
${line(HEADER.map((_, i) => (i === 0 ? '---' : '---:')))}
${figures.map((f) => line(row(f))).join('\n')}

- **Statements** are everything the store sends from \`submit\` to the end. For this turn, 7:
  \`submit\` 1; the claim 1 (it takes the lease and returns the transcript and the pending inbox
  rows in the same statement); per checkpoint (\`dispatching\` twice, the end) 1 statement that
  compare-and-swaps the state, appends the log entries since the last one and settles the inbox
  rows, 3 × 1 (a \`dispatching\` checkpoint is written with the start of its batch's first call,
  whose journal row keeps the checkpoint's log entries; the journal of a batch whose state was not
  written yet has no rows, so the worker reads nothing before the tools run); per tool call its
  result, one statement that checks the fencing token itself, 2 × 1. The boundary after each batch is
  not written: the \`dispatching\` state and the journal make it again
  ([durable turns](reference/durable-turns.md#the-guarantees)). No transactions: each statement commits on
  its own. A worker's last claim that finds nothing, and its look for turns falling due, add a
  fraction.
- **Payload bytes** are the parameters of those writes: the turn state (lean: only what differs
  from a fresh turn's, without its id, its limits lean against the defaults and last) with every checkpoint, the log entries once,
  each tool result once.
- **WAL bytes** are what the store wrote to the write-ahead log while the turns ran (full-page
  images after checkpoints included): on Postgres the records of the store's tables and indexes
  and of the transactions that wrote them (read back with \`pg_walinspect\`; other sessions on
  the server write to the same log and are not counted); on PGlite, the log's growth. **Stored
  bytes** are the growth of the store's tables and indexes per turn.${walSection(figures)}
- **Turns per second** are end to end through one worker (claim, model, tools, every write), with a
  model and tool that answer at once: the figure is the store's cost alone, and it moves with the
  machine's load (recorded above). Four turns at a time are faster on both backends: one turn's
  waits for the database (its writes reaching the disk, on Postgres also the round trips) overlap
  the others' work.${
    opening.length === 0
      ? ''
      : `
- **A new PGlite store** (a directory that does not exist yet), opened and closed by a fresh
  process, as a user's first \`turnkit run --store\`, \`turnkit dev\` or \`openStore(dir)\` does:
${newStoreLines(opening, '  - ')}

  initdb is most of a new store's cost, so the store keeps PGlite's own dump of a cluster initdb has
  just made (in the temporary directory, under the PGlite version; the first new store of a
  machine writes it) and starts each new store from it, an in-memory one (\`memory://\`) too. A
  copy that cannot be read or loaded is removed and the store is made by initdb, as without it.`
  }
${STORE_END}`;
}

/** Where the store section lies in docs/benchmarks.md. */
export const STORE: Markers = { start: STORE_START, end: STORE_END };

/** `page` with `section` in place of its store section, or before "## Reproduce" when it has none ('' removes nothing). */
export const withStoreSection = (page: string, section: string): string => withSection(page, section, STORE);

/** Writes `section` into docs/benchmarks.md (the rest of the page stays); returns the path. */
export const writeStoreSection = (section: string): string => writeSection(section, STORE);
