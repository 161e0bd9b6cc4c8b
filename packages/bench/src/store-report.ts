// The durable-turns section of docs/benchmarks.md: written by `pnpm bench --store --write`, kept as
// it is by `pnpm bench --write` (which rewrites the rest of the page).
import { cpus, loadavg } from 'node:os';
import { currentSection, type Markers, withSection, writeSection } from './doc-sections.js';
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

export function formatStoreTerminal(figures: readonly StoreFigure[]): string {
  return figures.map((f) => HEADER.map((h, i) => `${h}: ${row(f)[i]}`).join('\n')).join('\n\n');
}

/** The section, markers included. */
export function renderStoreSection(figures: readonly StoreFigure[], command: string): string {
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

- **Statements** are everything the store sends from \`submit\` to the end. For this turn, 25:
  \`submit\` 1; the claim 2 (the compare-and-set of the lease, the transcript read); the inbox read
  at the start 1; a journal read per tool batch 2; per tool call a fenced start and a fenced
  result, each a transaction that locks the turn's row and then writes, 2 × 2 × 2; per checkpoint
  (\`dispatching\` twice, the boundary before each later model call twice, the end) the
  compare-and-swap \`UPDATE\` and one \`INSERT\` of the messages and notices since the last one,
  5 × 2; closing the turn's inbox at the end 1. A worker's last claim that finds nothing adds a
  fraction. **Writes** are the \`INSERT\`s and \`UPDATE\`s among them; **transactions** the 4
  journal writes and 5 checkpoints (on Postgres each adds a \`BEGIN\` and a \`COMMIT\`, not
  counted here).
- **Payload bytes** are the parameters of those writes: the whole turn state (as JSON) with every
  checkpoint, the messages once, each tool result once. The state is rewritten at each checkpoint,
  so it dominates; the transcript is appended, never rewritten.
- **WAL bytes** are what the database wrote to its write-ahead log while the turns ran (full-page
  images after checkpoints included); on Postgres this is the whole cluster's log, so other
  sessions on it would add to it. **Stored bytes** are the growth of the store's tables and indexes
  per turn.
- **Turns per second** are end to end through one worker (claim, model, tools, every write), with a
  model and tool that answer at once: the figure is the store's cost alone, and it moves with the
  machine's load (recorded above). Four turns at a time are faster on both backends: one turn's
  waits for the database (its writes reaching the disk, on Postgres also the round trips) overlap
  the others' work.
${STORE_END}`;
}

const STORE: Markers = { start: STORE_START, end: STORE_END };

/** The store section currently in docs/benchmarks.md, or '' when it has none. */
export const currentStoreSection = (): string => currentSection(STORE);

/** `page` with `section` in place of its store section, or before "## Reproduce" when it has none ('' removes nothing). */
export const withStoreSection = (page: string, section: string): string => withSection(page, section, STORE);

/** Writes `section` into docs/benchmarks.md (the rest of the page stays); returns the path. */
export const writeStoreSection = (section: string): string => writeSection(section, STORE);
