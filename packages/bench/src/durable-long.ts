// The long-turn comparison (`pnpm bench --durable --long --postgres URL`): turnkit's store, turnkit on
// DBOS (@turnkit/dbos) and LangChain `createAgent` with LangGraph's `PostgresSaver`, each run on a
// database of its own on one Postgres server, one process, one turn at a time: the bench scenario,
// then turns of 10, 100 and 1,000 rounds whose tool outputs are 2 KB of incompressible text.
// Per turn and per round: turns/s, statements (at the system's `pg` client), commits
// (pg_stat_database), WAL bytes, stored bytes, and WAL bytes per byte of tool output.
//
// WAL bytes are the run database's own: pg_waldump over the run's stretch of the log, counting the
// records of the transactions that touched that database (other databases on the server write to
// the same log). Without pg_waldump at hand (the server on another machine) they are the whole
// log's growth meanwhile, and the report says so.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { availableParallelism, loadavg } from 'node:os';
import pg from 'pg';
import { type Markers, writeSection } from './doc-sections.js';

export type LongSystem = 'turnkit' | 'dbos' | 'langgraph';
export const LONG_SYSTEM_NAMES: Record<LongSystem, string> = {
  turnkit: 'turnkit workers (@turnkit/store)',
  dbos: 'turnkit on DBOS (@turnkit/dbos)',
  langgraph: 'LangChain createAgent + LangGraph PostgresSaver',
};

/** Characters of each long turn's tool output (durable-long-child.ts makes them). */
export const OUTPUT_CHARS = 2048;
/** Untimed turns of the bench scenario each process runs first (durable-long-child.ts: `WARMUP_TURNS`). */
const WARMUP_TURNS = 5;
/** The bench scenario's rounds (its two `add` calls): `rounds` 0 in a run. */
const SCENARIO_ROUNDS = 2;

export interface LongFigure {
  readonly system: LongSystem;
  /** 0: the bench scenario (two `add` calls with numbers for outputs). */
  readonly rounds: number;
  readonly turns: number;
  readonly turnsPerSecond: number;
  readonly statementsPerTurn: number;
  readonly commitsPerTurn: number;
  readonly walBytesPerTurn: number;
  readonly storedBytesPerTurn: number;
  /** WAL bytes per turn by `<relation> <record type>` (read with pg_waldump; absent without it). */
  readonly walParts?: Readonly<Record<string, number>>;
}

export interface LongReport {
  readonly figures: readonly LongFigure[];
  /** How WAL bytes were measured. */
  readonly wal: 'database' | 'server';
  /** Runs left out, and why. */
  readonly skipped: readonly string[];
  /** The machine's load average (1 minute) when the run ended. */
  readonly load: number;
}

/** The runs: rounds (0 the scenario) and turns per run. LangGraph stops at 100 rounds (see `LANGGRAPH_MAX_ROUNDS`). */
const RUNS: readonly { rounds: number; turns: number }[] = [
  { rounds: 0, turns: 50 },
  { rounds: 10, turns: 10 },
  { rounds: 100, turns: 3 },
  { rounds: 1000, turns: 1 },
];
/**
 * LangGraph's checkpoints hold the whole conversation and are written at every step, so its WAL
 * grows with the square of the rounds: about 58 MB at 100 rounds, some 6 GB at 1,000, more than a
 * shared test server should take. Its 1,000-round run is left out.
 */
const LANGGRAPH_MAX_ROUNDS = 100;

/** The temporary replication slot that keeps a run's log until pg_waldump has read it. */
const KEEP_SLOT = `turnkit_long_${process.pid}`;

const CHILD = fileURLToPath(new URL('./durable-long-child.js', import.meta.url));
const now = (): number => performance.timeOrigin + performance.now();

export function databaseUrl(server: string, database: string): string {
  const url = new URL(server);
  url.pathname = `/${database}`;
  return url.toString();
}

/** pg_waldump and the server's log directory, when this machine can read them. */
export async function walDump(admin: pg.Client): Promise<{ bin: string; dir: string } | null> {
  try {
    const dataDir = String((await admin.query('SHOW data_directory')).rows[0]?.data_directory);
    const binDir = String((await admin.query(`SELECT setting FROM pg_config WHERE name = 'BINDIR'`)).rows[0]?.setting);
    const bin = join(binDir, 'pg_waldump');
    const dir = join(dataDir, 'pg_wal');
    return existsSync(bin) && existsSync(dir) ? { bin, dir } : null;
  } catch {
    return null;
  }
}

/** Bytes of the log records, between two positions, of the transactions that touched database `oid` (pg_waldump, read as it prints). */
export async function databaseWal(dump: { bin: string; dir: string }, from: string, to: string, oid: number): Promise<number> {
  return (await databaseWalParts(dump, from, to, oid)).bytes;
}

/** `databaseWal`, with the bytes by relation (its file node, '-' for none) and record type (`WalCounter.parts`). */
async function databaseWalParts(
  dump: { bin: string; dir: string },
  from: string,
  to: string,
  oid: number,
): Promise<{ bytes: number; parts: Map<string, number> }> {
  const counter = new WalCounter(oid);
  const child = spawn(dump.bin, ['-p', dump.dir, '-s', from, '-e', to], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.on('close', resolve));
  for await (const line of createInterface({ input: child.stdout as NodeJS.ReadableStream })) counter.add(line);
  const code = await exited;
  if (code !== 0) throw new Error(`pg_waldump could not read the log from ${from} to ${to} (exit code ${String(code)}).`);
  return { bytes: counter.bytes(), parts: counter.parts() };
}

/** Relations whose file node is below this are the system catalogs (Postgres's FirstNormalObjectId). */
const FIRST_USER_NODE = 16384;

/**
 * Counts, from pg_waldump's lines, the bytes (`tot`) of the records of database `oid` (a block of
 * one of its tables or indexes) and of every record of a transaction that wrote such a block (its
 * commit), in all and by part: `<file node of the record's first block, or -> <resource manager>
 * <record type>`. The system catalogs' records are left out (autovacuum's statistics of the
 * tables, catalog pages pruned by a read: the server's upkeep, not the system's writes), and so
 * are the transactions that wrote only those.
 */
class WalCounter {
  private readonly byTx = new Map<number, [string, number][]>();
  private readonly ours = new Set<number>();
  private readonly direct: [string, number][] = [];
  private readonly rel: RegExp;
  constructor(oid: number) {
    this.rel = new RegExp(`rel \\d+/${oid}/(\\d+)`);
  }
  add(line: string): void {
    const m = /^rmgr: (\S+)\s+len \(rec\/tot\):\s*\d+\/\s*(\d+), tx:\s*(\d+).*?desc: (\S+)/.exec(line);
    if (m === null) return;
    const tot = Number(m[2]);
    const tx = Number(m[3]);
    const found = this.rel.exec(line);
    const rel = found !== null && Number(found[1]) >= FIRST_USER_NODE ? found : null;
    if (found !== null && rel === null && tx === 0) return;
    const image = line.includes(' FPW') ? '+page_image' : '';
    const part: [string, number] = [`${found?.[1] ?? '-'} ${m[1]} ${m[4]}${image}`, tot];
    if (tx === 0) {
      if (rel !== null) this.direct.push(part);
      return;
    }
    if (rel !== null) this.ours.add(tx);
    const records = this.byTx.get(tx);
    if (records === undefined) this.byTx.set(tx, [part]);
    else records.push(part);
  }
  private *records(): Iterable<[string, number]> {
    yield* this.direct;
    for (const tx of this.ours) yield* this.byTx.get(tx) ?? [];
  }
  bytes(): number {
    let sum = 0;
    for (const [, tot] of this.records()) sum += tot;
    return sum;
  }
  parts(): Map<string, number> {
    const parts = new Map<string, number>();
    for (const [key, tot] of this.records()) parts.set(key, (parts.get(key) ?? 0) + tot);
    return parts;
  }
}

/** `WalCounter` over pg_waldump's whole output. */
export function walOfDatabase(out: string, oid: number): number {
  const counter = new WalCounter(oid);
  for (const line of out.split('\n')) counter.add(line);
  return counter.bytes();
}

/** `WalCounter`'s parts over pg_waldump's whole output, each file node named by `names` (else kept as it is). */
export function walPartsOfDatabase(out: string, oid: number, names: ReadonlyMap<string, string>): Map<string, number> {
  const counter = new WalCounter(oid);
  for (const line of out.split('\n')) counter.add(line);
  return namedParts(counter.parts(), names);
}

/** Parts keyed `<relation> <record type>` (`<resource manager> <record type>` for a record of no relation), summed. */
function namedParts(parts: ReadonlyMap<string, number>, names: ReadonlyMap<string, string>): Map<string, number> {
  const named = new Map<string, number>();
  for (const [key, bytes] of parts) {
    const [node = '-', rmgr = '', type = ''] = key.split(' ');
    const name = node === '-' ? `${rmgr} ${type}` : `${names.get(node) ?? `relation ${node}`} ${type}`;
    named.set(name, (named.get(name) ?? 0) + bytes);
  }
  return named;
}

/** The run database's relations by file node. */
async function relationNames(url: string): Promise<Map<string, string>> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const { rows } = await db.query(`SELECT relfilenode::text AS node, relname FROM pg_class WHERE relfilenode <> 0`);
    return new Map(rows.map((r) => [String(r.node), String(r.relname)]));
  } finally {
    await db.end();
  }
}

async function storedBytes(url: string): Promise<number> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const { rows } = await db.query(
      `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::float8 AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE c.relkind IN ('r', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'`,
    );
    return Number(rows[0]?.bytes);
  } finally {
    await db.end();
  }
}

async function commits(admin: pg.Client, database: string): Promise<number> {
  const { rows } = await admin.query('SELECT xact_commit::float8 AS n FROM pg_stat_database WHERE datname = $1', [database]);
  return Number(rows[0]?.n);
}

async function lsn(admin: pg.Client): Promise<string> {
  return String((await admin.query('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]?.lsn);
}

async function runOnce(
  admin: pg.Client,
  server: string,
  dump: { bin: string; dir: string } | null,
  system: LongSystem,
  rounds: number,
  turns: number,
): Promise<LongFigure> {
  const database = `turnkit_long_${process.pid}_${system}_${rounds}`;
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${database}`);
  const url = databaseUrl(server, database);
  try {
    const oid = Number((await admin.query('SELECT oid FROM pg_database WHERE datname = $1', [database])).rows[0]?.oid);
    const child = spawn(process.execPath, [CHILD, system, url, String(rounds), String(turns)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })[Symbol.asyncIterator]();
    const first = await lines.next();
    if (first.value !== 'ready') throw new Error(`The ${system} process did not start (it said ${JSON.stringify(first.value)}).`);
    const storedBefore = await storedBytes(url);
    // Statistics of the sessions that set up reach pg_stat_database before the baseline.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const commitsBefore = await commits(admin, database);
    // The log from here on is kept until it is read (a temporary slot of this session: a checkpoint
    // during a long run would otherwise recycle its first segments before pg_waldump reads them).
    if (dump !== null) await admin.query(`SELECT pg_create_physical_replication_slot($1, true, true)`, [KEEP_SLOT]);
    const walBefore = await lsn(admin);
    const started = now();
    child.stdin?.write('go\n');
    let done: string[] | null = null;
    for (;;) {
      const next = await lines.next();
      if (next.done === true) break;
      const parts = String(next.value).split(' ');
      if (parts[0] === 'done') done = parts;
    }
    const seconds = (now() - started) / 1000;
    if (done === null) throw new Error(`The ${system} process ended before it said done.`);
    const walAfter = await lsn(admin);
    await new Promise((resolve) => setTimeout(resolve, 1000)); // the ended sessions' statistics
    const waits = Number(done[2]);
    const committed = (await commits(admin, database)) - commitsBefore - waits;
    const measured =
      dump === null
        ? {
            bytes: Number(
              (await admin.query('SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::float8 AS b', [walAfter, walBefore])).rows[0]
                ?.b,
            ),
            parts: null,
          }
        : await databaseWalParts(dump, walBefore, walAfter, oid);
    if (dump !== null) await admin.query('SELECT pg_drop_replication_slot($1)', [KEEP_SLOT]);
    const wal = measured.bytes;
    const parts = measured.parts === null ? null : namedParts(measured.parts, await relationNames(url));
    const stored = (await storedBytes(url)) - storedBefore;
    return {
      system,
      rounds,
      turns,
      turnsPerSecond: turns / seconds,
      statementsPerTurn: Number(done[1]) / turns,
      commitsPerTurn: committed / turns,
      walBytesPerTurn: wal / turns,
      storedBytesPerTurn: stored / turns,
      ...(parts === null ? {} : { walParts: Object.fromEntries([...parts].map(([k, v]) => [k, v / turns])) }),
    };
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  }
}

export interface LongOptions {
  readonly postgresUrl: string;
  /** The systems to run (all three when absent). */
  readonly systems?: readonly LongSystem[];
  readonly log: (line: string) => void;
}

export async function runLongBench(o: LongOptions): Promise<LongReport> {
  const admin = new pg.Client({ connectionString: o.postgresUrl });
  await admin.connect();
  try {
    const dump = await walDump(admin);
    const figures: LongFigure[] = [];
    const skipped: string[] = [];
    for (const { rounds, turns } of RUNS) {
      for (const system of o.systems ?? (['turnkit', 'dbos', 'langgraph'] as const)) {
        if (system === 'langgraph' && rounds > LANGGRAPH_MAX_ROUNDS) {
          skipped.push(
            `${LONG_SYSTEM_NAMES.langgraph}, ${rounds} rounds: its checkpoints hold the whole conversation and are written at every step, so its WAL grows with the square of the rounds (about 58 MB at 100 rounds, some 6 GB at 1,000), more than a shared server should take`,
          );
          continue;
        }
        o.log(
          `Long turns: ${LONG_SYSTEM_NAMES[system]}, ${rounds === 0 ? 'the bench scenario' : `${rounds} rounds`}, ${turns} turn(s)…`,
        );
        const figure = await runOnce(admin, o.postgresUrl, dump, system, rounds, turns);
        figures.push(figure);
        o.log(`  ${JSON.stringify(figure)}`);
      }
    }
    return { figures, wal: dump === null ? 'server' : 'database', skipped, load: loadavg()[0] ?? Number.NaN };
  } finally {
    await admin.end();
  }
}

const n0 = (n: number): string => Math.round(n).toLocaleString('en-US');
const n1 = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : '–');
const n2 = (n: number): string => (Number.isFinite(n) ? n.toFixed(2) : '–');
/** A rate: three significant digits. */
const rate = (n: number): string => (Number.isFinite(n) ? (n >= 100 ? n0(n) : n.toPrecision(3)) : '–');

/** Rounds of a run, and bytes of tool output per round (the scenario's outputs are small numbers: none counted). */
const roundsOf = (f: LongFigure): number => (f.rounds === 0 ? SCENARIO_ROUNDS : f.rounds);

function table(report: LongReport): string {
  const rows = report.figures.map((f) => {
    const r = roundsOf(f);
    const perOutput = f.rounds === 0 ? '–' : n2(f.walBytesPerTurn / (f.rounds * OUTPUT_CHARS));
    return `| ${LONG_SYSTEM_NAMES[f.system]} | ${f.rounds === 0 ? 'scenario (2)' : n0(f.rounds)} | ${f.turns} | ${rate(f.turnsPerSecond)} / ${rate(f.turnsPerSecond * r)} | ${n1(f.statementsPerTurn)} / ${n1(f.statementsPerTurn / r)} | ${n1(f.commitsPerTurn)} / ${n1(f.commitsPerTurn / r)} | ${n0(f.walBytesPerTurn)} / ${n0(f.walBytesPerTurn / r)} | ${n0(f.storedBytesPerTurn)} / ${n0(f.storedBytesPerTurn / r)} | ${perOutput} |`;
  });
  return [
    '| system | rounds | turns | turns/s / rounds/s | statements: per turn / per round | commits: per turn / per round | WAL bytes: per turn / per round | stored bytes: per turn / per round | WAL bytes per output byte |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
}

export const LONG: Markers = {
  start: '<!-- long turns section: written by `pnpm bench --durable --long --postgres URL --write` -->',
  end: '<!-- end of long turns section -->',
};

export function formatLongTerminal(report: LongReport): string {
  return table(report);
}

/** The round's cost at `rounds` over its cost at 10 rounds, for a system (WAL bytes per round). */
function flatness(report: LongReport, system: LongSystem, rounds: number): number {
  const at = (r: number) => report.figures.find((f) => f.system === system && f.rounds === r);
  const ten = at(10);
  const far = at(rounds);
  return ten === undefined || far === undefined ? Number.NaN : far.walBytesPerTurn / far.rounds / (ten.walBytesPerTurn / 10);
}

/** The parts shown of a round's WAL; the rest are summed as one line. */
const PARTS_SHOWN = 12;

/** Where a round's WAL goes in the store's longest turn measured (a table), or '' without parts. */
function breakdown(report: LongReport): string {
  const longest = report.figures
    .filter((f) => f.system === 'turnkit' && f.rounds > 0 && f.walParts !== undefined)
    .sort((a, b) => b.rounds - a.rounds)[0];
  if (longest?.walParts === undefined) return '';
  const parts = Object.entries(longest.walParts).sort((a, b) => b[1] - a[1]);
  const shown = parts.slice(0, PARTS_SHOWN);
  const rest = parts.slice(PARTS_SHOWN).reduce((sum, [, bytes]) => sum + bytes, 0);
  const rows = shown.map(([part, bytes]) => `| ${part} | ${n0(bytes / longest.rounds)} |`);
  const images = parts.filter(([part]) => part.endsWith('+page_image')).reduce((sum, [, bytes]) => sum + bytes, 0);
  if (rest > 0) rows.push(`| the rest (${parts.length - PARTS_SHOWN} kinds of record) | ${n0(rest / longest.rounds)} |`);
  return `
Where a round's WAL goes in the store's ${n0(longest.rounds)}-round turn, by relation and record type (pg_waldump; \`+page_image\`:
a record that carried a full-page image, as the first change to a page after a checkpoint does), per round
(${n0(longest.walBytesPerTurn / longest.rounds)} bytes in all, ${n0(OUTPUT_CHARS)} of them the tool's output; records with a page image ${n0(images / longest.rounds)}):

| relation and record | WAL bytes per round |
| --- | ---: |
${rows.join('\n')}
`;
}

export function renderLongSection(report: LongReport, command: string, date = new Date()): string {
  const scenario = (s: LongSystem) => report.figures.find((f) => f.system === s && f.rounds === 0);
  const speed = (scenario('turnkit')?.turnsPerSecond ?? Number.NaN) / (scenario('langgraph')?.turnsPerSecond ?? Number.NaN);
  const walNote =
    report.wal === 'database'
      ? "WAL bytes are the run database's own: pg_waldump over the run's stretch of the log, counting the records of its tables and indexes and of the transactions that wrote them (other databases on the server write to the same log; the system catalogs' records, autovacuum's statistics among them, are the server's upkeep and are not counted)"
      : "WAL bytes are the whole server's log growth during the run (pg_waldump was not at hand): other databases' writes are included";
  return `${LONG.start}
## Long turns: the store, DBOS and LangGraph

\`${command}\`: each system in one process, one turn at a time, on a database of its own on one
Postgres server, after ${WARMUP_TURNS} untimed turns of the bench scenario in that process (modules loaded, code
compiled, connections open: the same for every system, and as in the durable section; the figures
count from then on): the bench scenario (two \`add\` calls, then the answer), then turns of 10, 100 and
1,000 rounds, each round one \`echo\` call whose output is ${n0(OUTPUT_CHARS)} characters of random base64
(incompressible to Postgres), then the answer. Statements are counted at each system's \`pg\`
client; commits are the database's committed transactions (\`pg_stat_database.xact_commit\`,
read-only ones included; the statements the DBOS run sent only to see a turn end are taken out);
${walNote}; stored bytes are the growth of the database's tables. Figures are per turn / per round.

- Date: ${date.toISOString().slice(0, 10)}; Node ${process.version}; load average ${report.load.toFixed(2)} on ${availableParallelism()} cores when the run ended
  (other work on the machine moves turns/s; statements, commits and bytes it does not)

${table(report)}

${report.skipped.map((s) => `- Left out: ${s}.`).join('\n')}

- The store's cost of a round from 10 to 1,000 rounds: ×${n2(flatness(report, 'turnkit', 1000))} WAL bytes per round (1.00 is flat);
  DBOS's: ×${n2(flatness(report, 'dbos', 1000))}; LangGraph's from 10 to 100 rounds: ×${n2(flatness(report, 'langgraph', 100))}.
- On the bench scenario the store ran ${n2(speed)}× LangGraph's turns per second (one process each, one after the
  other on a loaded machine: a rate moves with the load of its own stretch of the run; the durable
  section's one-process run is the other measure of the same turns).
${breakdown(report)}<!-- end of long turns section -->`;
}

export const writeLongSection = (section: string): string => writeSection(section, LONG);
