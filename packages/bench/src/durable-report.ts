// The durable comparison's section of docs/benchmarks.md (`pnpm bench --durable --postgres URL
// --write` rewrites it; `pnpm bench --write` keeps it) and its terminal table.
import { loadavg } from 'node:os';
import { currentSection, type Markers, withSection, writeSection } from './doc-sections.js';
import { type DurableReport, SYSTEM_NAMES, type ThroughputFigure } from './durable.js';

export const DURABLE_START = '<!-- durable section: written by `pnpm bench --durable --postgres URL --write` -->';
export const DURABLE_END = '<!-- end of durable section -->';

/** A turn of the scenario is this many store statements (docs/benchmarks.md's durable-turns section counts them). */
const DURABLE_STATEMENTS = 7;

const n0 = (n: number): string => Math.round(n).toLocaleString('en-US');
const n1 = (n: number): string => n.toFixed(1);

function table(report: DurableReport): string {
  const rows = report.throughput.map(
    (f) =>
      `| ${SYSTEM_NAMES[f.system]} | ${f.workers} | ${n1(f.turnsPerSecond)} | ${n1(f.statementsPerTurn)} | ${n1(f.flushesPerTurn)} | ${n0(f.walBytesPerTurn)} | ${n0(f.storedBytesPerTurn)} | ${n1(f.workerCpuMsPerTurn)} / ${n1(f.otherCpuMsPerTurn)} | ${n0(f.cpuBusy * 100)}% |`,
  );
  return [
    '| system | worker processes | turns/s | statements per turn | log flushes per turn | WAL bytes per turn | stored bytes per turn | CPU ms per turn: workers / Postgres | cores busy |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
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

/**
 * The ratios the comparison is about, from the figures (never written by hand). `bytes`, `stored`
 * and `speed` are the smallest over the worker counts both systems ran (a goal is met only when it
 * is met at each); `scaling` is turnkit's rate at 4 worker processes over its rate at 1.
 */
export function durableRatios(report: DurableReport): {
  bytes: number;
  stored: number;
  speed: number;
  scaling: number;
  flushes: number;
  latency: number;
} {
  const tk = find(report, 'turnkit', 1);
  const lg = find(report, 'langgraph', 1);
  const tk4 = find(report, 'turnkit', 4);
  const pairs = report.throughput
    .filter((f) => f.system === 'turnkit')
    .flatMap((t) => {
      const l = find(report, 'langgraph', t.workers);
      return l === undefined ? [] : [{ t, l }];
    });
  const least = (ratio: (p: { t: ThroughputFigure; l: ThroughputFigure }) => number): number =>
    pairs.length === 0 ? Number.NaN : Math.min(...pairs.map(ratio));
  return {
    bytes: least(({ t, l }) => l.walBytesPerTurn / t.walBytesPerTurn),
    stored: least(({ t, l }) => l.storedBytesPerTurn / t.storedBytesPerTurn),
    speed: least(({ t, l }) => t.turnsPerSecond / l.turnsPerSecond),
    scaling: (tk4?.turnsPerSecond ?? Number.NaN) / (tk?.turnsPerSecond ?? Number.NaN),
    flushes: (lg?.flushesPerTurn ?? Number.NaN) / (tk?.flushesPerTurn ?? Number.NaN),
    latency:
      (report.latency.find((l) => l.system === 'turnkit')?.p50Ms ?? Number.NaN) /
      (report.latency.find((l) => l.system === 'langgraph')?.p50Ms ?? Number.NaN),
  };
}

/** Where turnkit's scaling from 1 to 4 worker processes stops, from the CPU figures of its runs. */
function scalingText(report: DurableReport, cpus: number): string {
  const r = durableRatios(report);
  const one = find(report, 'turnkit', 1);
  const four = find(report, 'turnkit', 4);
  if (one === undefined || four === undefined) return '';
  const pct = (x: number): string => `${Math.round(x * 100)}%`;
  const perTurn = (f: ThroughputFigure): number => f.workerCpuMsPerTurn + f.otherCpuMsPerTurn;
  return `From 1 to 4 turnkit worker processes the rate went ×${r.scaling.toFixed(2)}. Where it stops: this machine has
${cpus} CPU core(s), shared by the worker processes and Postgres. At one process the cores were ${pct(one.cpuBusy)} busy
(the turn waits for round trips and log flushes, so more processes add throughput while cores are free); at
four they were ${pct(four.cpuBusy)} busy, and a turn cost ${n1(perTurn(four))} ms of CPU (${n1(four.workerCpuMsPerTurn)} in the workers,
${n1(four.otherCpuMsPerTurn)} in Postgres and the rest of the machine), so ${cpus} core(s) allow about
${n0((cpus * 1000) / perTurn(four))} turns/s. The bottleneck is the CPU, of which Postgres takes ${pct(four.otherCpuMsPerTurn / perTurn(four))}; not
Postgres's locks (claims never wait on each other: \`FOR UPDATE SKIP LOCKED\`) nor its log (${n1(four.flushesPerTurn)} flushes per
turn, shared by concurrent commits). With the workers on other machines, Postgres's share is what bounds one database.`;
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
\`PostgresSaver\`, one \`invoke\` after another). Each run starts on an empty schema. Each process first
runs 5 turns of the scenario untimed (modules loaded, code compiled, connections open: the same for
both systems and in the long-turn section); the figures count from then on. Statements are
counted at each system's \`pg\` client (transaction statements included); log flushes are the times
Postgres waited for its write-ahead log to reach the disk (\`pg_stat_wal\`, the whole server's); WAL bytes
are what the run's database wrote to that log meanwhile (pg_waldump: its records and its transactions'
commits, not other databases' on the server; without pg_waldump at hand, the server's log growth);
stored bytes are the growth of the schema's tables.

- Date: ${new Date().toISOString().slice(0, 10)}; Node ${process.version}; load average ${loadavg()[0]?.toFixed(2)} on ${cpus} cores when the run ended
  (other work on the machine moves turns/s and latency; statements, bytes and flushes it does not)

${table(report)}

At every worker count, LangGraph wrote at least ${r.bytes.toFixed(1)}× the WAL bytes and ${r.stored.toFixed(1)}× the stored bytes
per turn of turnkit, and turnkit ran at least ${r.speed.toFixed(1)}× the turns per second (the smallest ratios of the 1, 2
and 4 process runs). Against the goals of at least 5× fewer bytes written per turn and at least 3×
the turns per second: ${r.bytes >= 5 && r.stored >= 5 ? 'met' : 'not met'} and ${r.speed >= 3 ? 'met' : 'not met'} in this run.

${scalingText(report, cpus)}

What bounds each figure:

- **Turns per second** at one worker is the sum of the turn's round trips and of the times Postgres
  flushes its log to disk, one after another. turnkit's turn is ${DURABLE_STATEMENTS} statements and
  7 flushes: \`submit\`, the claim, each call's start (written with its batch's \`dispatching\`
  checkpoint) and result, and the end ([durable turns](durable-turns.md#what-the-store-guarantees)).
  None of the 7 can go without giving up a guarantee: a result not on disk can be lost, a start not
  on disk can let a tool run twice, a claim not on disk can give its fencing token out twice.
  LangGraph flushed ${r.flushes.toFixed(1)}× as often per turn. Where a flush is slow (a loaded or
  networked disk) the ratio of turns per second tends to that of flushes; where it is fast, to
  that of the work done per turn.
- **WAL bytes** are bounded by what a turn must keep: the transcript and notices once, each tool
  call's start and result, and the state at the checkpoints a crash resumes from (\`dispatching\`
  before each batch and the end; the boundary after a batch is rebuilt from the journal, not
  written). The state is stored lean (only what differs from a fresh turn's: about 200 bytes of
  JSON here, not 450), and Postgres logs only the columns of the row that changed, which the
  column order keeps together. What is left is mostly per record: each statement's commit record,
  each row's header and key, each index entry. The Postgres row of the
  [durable-turns section](#durable-turns-turnkitstore) splits a turn's WAL by what it was written for.
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
