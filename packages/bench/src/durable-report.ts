// The durable comparison's section of docs/benchmarks.md (`pnpm bench --durable --postgres URL
// --write` rewrites it; `pnpm bench --write` keeps it) and its terminal table.
import { loadavg } from 'node:os';
import { currentSection, type Markers, withSection, writeSection } from './doc-sections.js';
import { type DurableReport, SYSTEM_NAMES, type ThroughputFigure } from './durable.js';

export const DURABLE_START = '<!-- durable section: written by `pnpm bench --durable --postgres URL --write` -->';
export const DURABLE_END = '<!-- end of durable section -->';

/** A turn of the scenario is this many store statements (docs/benchmarks.md's durable-turns section counts them). */
const DURABLE_STATEMENTS = 11;

const n0 = (n: number): string => Math.round(n).toLocaleString('en-US');
const n1 = (n: number): string => n.toFixed(1);

function table(report: DurableReport): string {
  const rows = report.throughput.map(
    (f) =>
      `| ${SYSTEM_NAMES[f.system]} | ${f.workers} | ${n1(f.turnsPerSecond)} | ${n1(f.statementsPerTurn)} | ${n1(f.flushesPerTurn)} | ${n0(f.walBytesPerTurn)} | ${n0(f.storedBytesPerTurn)} |`,
  );
  return [
    '| system | worker processes | turns/s | statements per turn | log flushes per turn | WAL bytes per turn | stored bytes per turn |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
}

function latencyTable(report: DurableReport): string {
  return [
    '| system | decisions | p50 ms | p99 ms |',
    '| --- | ---: | ---: | ---: |',
    ...report.latency.map((l) => `| ${SYSTEM_NAMES[l.system]} | ${l.decisions} | ${n1(l.p50Ms)} | ${n1(l.p99Ms)} |`),
  ].join('\n');
}

const find = (report: DurableReport, system: string, workers: number): ThroughputFigure | undefined =>
  report.throughput.find((f) => f.system === system && f.workers === workers);

/** The ratios the comparison is about, from the figures (never written by hand). */
export function durableRatios(report: DurableReport): {
  bytes: number;
  speed: number;
  scaling: number;
  flushes: number;
  latency: number;
} {
  const tk = find(report, 'turnkit', 1);
  const lg = find(report, 'langgraph', 1);
  const tk4 = find(report, 'turnkit', 4);
  return {
    bytes: (lg?.walBytesPerTurn ?? Number.NaN) / (tk?.walBytesPerTurn ?? Number.NaN),
    speed: (tk?.turnsPerSecond ?? Number.NaN) / (lg?.turnsPerSecond ?? Number.NaN),
    scaling: (tk4?.turnsPerSecond ?? Number.NaN) / (tk?.turnsPerSecond ?? Number.NaN),
    flushes: (lg?.flushesPerTurn ?? Number.NaN) / (tk?.flushesPerTurn ?? Number.NaN),
    latency:
      (report.latency.find((l) => l.system === 'turnkit')?.p50Ms ?? Number.NaN) /
      (report.latency.find((l) => l.system === 'langgraph')?.p50Ms ?? Number.NaN),
  };
}

export function formatDurableTerminal(report: DurableReport): string {
  return `${table(report)}\n\n${latencyTable(report)}`;
}

/** The section, markers included. */
export function renderDurableSection(report: DurableReport, command: string, cpus: number): string {
  const r = durableRatios(report);
  return `${DURABLE_START}
## Durable turns against LangGraph, on one Postgres

\`${command}\`: the bench scenario (two \`add\` calls, then the answer) as durable turns on one
Postgres, through 1, 2 and 4 worker processes of each system, one turn at a time per process
(turnkit: \`createWorker({ concurrency: 1 })\`; LangGraph: \`createAgent({ checkpointer })\` with
\`PostgresSaver\`, one \`invoke\` after another). Each run starts on an empty schema. Statements are
counted at each system's \`pg\` client (transaction statements included); log flushes are the times
Postgres waited for its write-ahead log to reach the disk (\`pg_stat_wal\`); WAL bytes are what the
database wrote to that log meanwhile; stored bytes are the growth of the schema's tables.

- Date: ${new Date().toISOString().slice(0, 10)}; Node ${process.version}; load average ${loadavg()[0]?.toFixed(2)} on ${cpus} cores when the run ended
  (other work on the machine moves turns/s and latency; statements, bytes and flushes it does not)

${table(report)}

At one worker process, LangGraph wrote ${r.bytes.toFixed(1)}× the WAL bytes per turn of turnkit, and
turnkit ran ${r.speed.toFixed(1)}× the turns per second. From 1 to 4 turnkit worker processes the
rate went ×${r.scaling.toFixed(2)}. This machine has ${cpus} CPU core(s) shared by the worker
processes and Postgres: with more processes than cores, the CPU is the bottleneck, not Postgres's
locks (claims never wait on each other: \`FOR UPDATE SKIP LOCKED\`). Against the goals of at least
5× fewer bytes written per turn and at least 3× the turns per second: ${r.bytes >= 5 ? 'met' : 'not met'} and ${r.speed >= 3 ? 'met' : 'not met'} in this run.

What bounds each figure:

- **Turns per second** at one worker is the sum of the turn's round trips and of the times Postgres
  flushes its log to disk, one after another. turnkit's turn is ${DURABLE_STATEMENTS} statements and
  7 flushes: \`submit\`, the claim, each call's start and result, and the end; the checkpoints in
  between commit without waiting, and the next flush takes them along ([durable turns](durable-turns.md#the-guarantees)).
  None of the 7 can go without giving up a guarantee: a result not on disk can be lost, a start not
  on disk can let a tool run twice, a claim not on disk can give its fencing token out twice.
  LangGraph flushed ${r.flushes.toFixed(1)}× as often per turn. Where a flush is slow (a loaded or
  networked disk) the ratio of turns per second tends to that of flushes; where it is fast, to
  that of the work done per turn.
- **WAL bytes** are bounded by what a turn must keep: the transcript and notices once, each tool
  call's start and result, and the state at each of the five checkpoints of the turn contract
  (core emits them; a checkpoint is what a crash resumes from). The state is rewritten whole at each
  (about 450 bytes of JSON here, without its id and limits); Postgres logs the part of the row that
  changed. The Postgres row of the [durable-turns section](#durable-turns-turnkitstore) splits a
  turn's WAL by what it was written for.
- **Decision to running** is bounded by three flushes in a row, each a guarantee: \`decide\` returns
  once the decision is on disk, the worker's claim of the turn is on disk before it writes
  anything (fencing), and the call's start is on disk before its tool runs (at most once). The
  notification that wakes the worker adds a round trip. LangGraph's deciding process resumes the
  graph itself and runs the tool before it writes anything: nothing reaches the disk first.
  turnkit's p50 was ${r.latency.toFixed(1)}× LangGraph's in this run.

Time from a decision to the turn running its tool again (turnkit: \`store.decide\` in one process,
a worker process woken by \`NOTIFY\` claims the turn and runs the call; LangGraph: the deciding
process resumes the graph itself with \`Command({ resume })\`, loading the checkpoint):

${latencyTable(report)}
${DURABLE_END}`;
}

const DURABLE: Markers = { start: DURABLE_START, end: DURABLE_END };

/** The durable section currently in docs/benchmarks.md, or ''. */
export const currentDurableSection = (): string => currentSection(DURABLE);

/** `page` with `section` in place of its durable section, or before "## Reproduce" ('' changes nothing). */
export const withDurableSection = (page: string, section: string): string => withSection(page, section, DURABLE);

export const writeDurableSection = (section: string): string => writeSection(section, DURABLE);
