// What a run measured, as a terminal table and as docs/benchmarks.md.
import { timeBound, whatBoundsIt } from './bounds.js';
import type { BenchReport, TurnReport } from './report-types.js';
import { checkTargets, fixed, floorOf, int, turnTargets, type TargetVerdict } from './targets.js';

export { checkTargets, TARGETS, type TargetCheck, type TargetVerdict } from './targets.js';

export type {
  BenchReport,
  ExploreFigure,
  LongTurnFigure,
  StepFigure,
  StreamingFigure,
  SuspendedHeapFigure,
  TurnReport,
} from './report-types.js';

function table(header: readonly string[], rows: readonly (readonly string[])[], markdown: boolean): string {
  if (markdown) {
    const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
    return [line(header), line(header.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)].join('\n');
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const QUICK_NOTE = 'not comparable (--quick: not warmed up)';

function verdictLabel(verdict: TargetVerdict, markdown: boolean): string {
  switch (verdict) {
    case 'met':
      return 'met';
    case 'missed':
      return markdown ? '**missed**' : 'MISSED';
    case 'not measured':
      return '-';
    case 'not comparable':
      return QUICK_NOTE;
  }
}

function turnHeader(report: TurnReport): string[] {
  return [
    'system',
    'median µs/turn',
    'p95 µs/turn',
    'CPU µs/turn',
    'KB allocated/turn',
    '× floor',
    `× ${report.turns[0]?.name ?? 'turnkit'}`,
    'turns timed',
  ];
}

function turnRows(report: TurnReport): string[][] {
  const floor = floorOf(report);
  return report.turns.map((t) => [
    t.name,
    fixed(t.medianUs, 1),
    fixed(t.p95Us, 1),
    fixed(t.cpuUs, 1),
    fixed(t.bytesPerTurn / 1024, 1),
    floor === undefined ? 'n/a' : `${fixed(t.medianUs / floor.medianUs, 1)}×`,
    `${fixed(t.ratio, 1)}×`,
    int(t.samplesUs.length),
  ]);
}

function figureRows(report: BenchReport): string[][] {
  const { suspendedHeap: heap, step, streaming, explore } = report;
  return [
    [
      'heap retained per suspended turn',
      `${int(heap.bytesPerTurn)} bytes`,
      `${int(heap.turns)} turns parked for approval (the whole suspended result: state, transcript, pending call, grants, budget counts; ${int(heap.jsonBytesPerTurn)} bytes as JSON)`,
    ],
    [
      '`step` per transition',
      `${int(step.nsPerTransition)} ns`,
      `${int(step.transitions)} transitions over ${int(step.turns)} turns, mixed events`,
    ],
    ['streamTurn text deltas', `${int(streaming.turnkitPerSecond)} /s`, `${int(streaming.deltas)} deltas, consumer does nothing`],
    [
      'AI SDK 6 streamText text deltas',
      streaming.aiSdkPerSecond === undefined ? 'not run' : `${int(streaming.aiSdkPerSecond)} /s`,
      streaming.aiSdkPerSecond === undefined
        ? 'peers are skipped with --quick'
        : `same ${int(streaming.deltas)} deltas, fullStream read to the end`,
    ],
    [
      'exploreTurn',
      `${int(explore.statesPerSecond)} states/s`,
      `${int(explore.states)} states, ${int(explore.transitions)} transitions in ${fixed(explore.seconds, 2)} s, ${fixed(explore.cpuSeconds, 2)} s of CPU (${explore.limits})`,
    ],
  ];
}

/** One row per ten blocks: the nanoseconds per transition of each block of the long turn. */
function longTurnRows(report: BenchReport): string[][] {
  const { block, nsPerTransition } = report.longTurn;
  const rows: string[][] = [];
  for (let at = 0; at < nsPerTransition.length; at += 10) {
    const cells = nsPerTransition.slice(at, at + 10).map((ns) => int(ns));
    while (cells.length < 10) cells.push('');
    rows.push([`${int(at * block + 1)}–${int(Math.min(nsPerTransition.length, at + 10) * block)}`, ...cells]);
  }
  return rows;
}

function longTurnHeader(report: BenchReport): string[] {
  const { block } = report.longTurn;
  return ['rounds', ...Array.from({ length: 10 }, (_, i) => `+${int((i + 1) * block)}`)];
}

const FIGURE_HEADER = ['figure', 'value', 'how'];
const TARGET_HEADER = ['target', 'goal', 'measured', ''];

/** The run as plain text for the terminal. */
export function formatTerminal(report: BenchReport): string {
  const targets = checkTargets(report).map((c) => [c.name, c.target, c.measured, verdictLabel(c.verdict, false)]);
  return [
    `turnkit bench · ${report.date} · Node ${report.node} · ${report.cpu} · load ${fixed(report.load.average, 2)} on ${report.load.cores} cores`,
    '',
    table(turnHeader(report), turnRows(report), false),
    '',
    table(FIGURE_HEADER, figureRows(report), false),
    '',
    `\`step\` ns per transition over one turn of ${int(report.longTurn.rounds)} tool rounds, per block of ${int(report.longTurn.block)} rounds:`,
    table(longTurnHeader(report), longTurnRows(report), false),
    '',
    table(TARGET_HEADER, targets, false),
  ].join('\n');
}

function profileSection(report: TurnReport): string {
  const profile = report.profile;
  if (profile === undefined) return 'Not profiled in a `--quick` run.';
  const rows = profile.top.map((e) => [`\`${e.where}\``, `${fixed(e.selfPercent, 1)}%`]);
  return `V8's CPU profiler (what \`node --cpu-prof\` records), in this run, before any peer was loaded, over ${int(profile.turns)} turns of ${profile.system}; the functions with the most self time:

${table(['function', 'self time'], rows, true)}`;
}

const TURN_HEADING = '## Time, CPU and allocation per turn';
const PROFILE_HEADING = '## Profile';

/** The per-turn section; `ownRun` (a `--per-turn` run) says when and how it was measured, which the page's head says otherwise. */
function turnSection(report: TurnReport, ownRun: boolean): string {
  const run = ownRun
    ? `\n\nThis section and the first two targets, the time per turn under "What bounds it" and the profile are from their own run (${report.date}, Node ${report.node}, load average ${fixed(report.load.average, 2)} on ${report.load.cores} cores): \`${report.command}\`${report.seconds === undefined ? '' : `, ${fixed(report.seconds / 60, 1)} minutes`}.`
    : '';
  return `${TURN_HEADING}

Wall time is each turn's own (the median skips the turns a garbage collection or other load
stopped); CPU time (user + system, every thread of the process, garbage collection included) is a
round's total over its turns, a mean, so it can exceed the median wall time. Allocation is every
byte the heap grew by over rounds of up to 500 turns, with what garbage collections freed meanwhile
added back (V8's GC profiler reports the heap before and after each one), the median of five
rounds run after up to 2,000 settling turns (\`packages/bench/src/allocation.ts\`); it is measured
for each system after its warm-up and before the timed rounds of the same run, turnkit and the floor
before any peer has run.${run}

${table(turnHeader(report), turnRows(report), true)}`;
}

/**
 * `text` with the part from `start` up to the nearest of `ends` (not included) replaced; throws
 * when `start` or every end is missing.
 */
function replaceBetween(text: string, start: string, ends: readonly string[], replacement: string): string {
  const from = text.indexOf(start);
  const found = ends.map((end) => (from === -1 ? -1 : text.indexOf(end, from + start.length))).filter((at) => at !== -1);
  if (found.length === 0)
    throw new Error(
      `docs/benchmarks.md has no '${start.trim()}' followed by the end of its part: run the full pnpm bench --write once to rewrite the page.`,
    );
  return `${text.slice(0, from)}${replacement}${text.slice(Math.min(...found))}`;
}

/**
 * The page with the per-turn parts of a `--per-turn` run in place (its section, the first two
 * targets, the time per turn under "What bounds it", the profile); everything else as it was.
 */
export function withTurnSections(page: string, report: TurnReport): string {
  let next = replaceBetween(page, `${TURN_HEADING}\n`, ['\n## '], `${turnSection(report, true)}\n`);
  for (const check of turnTargets(report)) {
    const row = `| ${[check.name, check.target, check.measured, verdictLabel(check.verdict, true)].join(' | ')} |`;
    next = replaceBetween(next, `| ${check.name} |`, ['\n'], row);
  }
  next = replaceBetween(next, '- **Time per turn.**', ['\n'], timeBound(report));
  return replaceBetween(next, `${PROFILE_HEADING}\n`, ['\n<!--', '\n## '], `${PROFILE_HEADING}\n\n${profileSection(report)}\n`);
}

/** The per-turn run for the terminal: the table and the speed bar's two targets. */
export function formatTurnTerminal(report: TurnReport): string {
  const targets = turnTargets(report).map((c) => [c.name, c.target, c.measured, verdictLabel(c.verdict, false)]);
  return [
    `turnkit bench --per-turn · ${report.date} · Node ${report.node} · ${report.cpu} · load ${fixed(report.load.average, 2)} on ${report.load.cores} cores`,
    '',
    table(turnHeader(report), turnRows(report), false),
    '',
    table(TARGET_HEADER, targets, false),
    ...(report.profile === undefined
      ? []
      : [
          '',
          `Profile of ${report.profile.system}, ${int(report.profile.turns)} turns, by self time:`,
          table(
            ['function', 'self time'],
            report.profile.top.map((e) => [e.where, `${fixed(e.selfPercent, 1)}%`]),
            false,
          ),
        ]),
  ].join('\n');
}

/** The run as the full text of docs/benchmarks.md. */
export function renderMarkdown(report: BenchReport): string {
  const targets = checkTargets(report).map((c) => [c.name, c.target, c.measured, verdictLabel(c.verdict, true)]);
  return `# Benchmarks

turnkit runs a turn as a pure state machine; its promise is that the loop itself costs next to
nothing. This page is written by \`pnpm bench --write\` (packages/bench): every system runs the same
scenario in one process run, interleaved in rounds (A B C … A B C …) so machine drift hits all
alike, and every turn's tool results ([1, 2]) and final text ('done') are checked, so no system wins
by skipping work.

- Date: ${report.date}
- Node: ${report.node}
- CPU: ${report.cpu}
- Load average (1 min) at start: ${fixed(report.load.average, 2)} on ${report.load.cores} cores
- Command: \`${report.command}\`${report.seconds === undefined ? '' : `, which took ${fixed(report.seconds / 60, 1)} minutes`}${report.quick ? '\n- Quick run: turnkit systems and the floor only, small counts; not a comparison.' : ''}

## The scenario

Three model calls, scripted, no network: the model calls \`add\` {a: 0, b: 1}, then \`add\`
{a: 1, b: 1}, then answers \`done\`. One \`add\` tool with a zod schema \`{a: number, b: number}\`.

- turnkit runs it as users write it: an \`async\` tool from \`defineTool\` and \`scriptedModel\` from
  @turnkit/testing (a fresh one per turn: its script is used up by one turn), through an agent
  defined once (\`createAgent({ model, tools }).run('go', { model })\`, the reference row), through
  \`runTurn\` and through \`streamTurn\`. The row marked "sync tool, hand model" is the cheaper path
  of a synchronous \`execute\` and a hand-written \`Model\` that never reads its \`signal\`.
- The floor is a bare loop doing only the scenario's work: three awaited replies, two zod parses,
  two awaited async tool calls and a transcript (\`packages/bench/src/floor.ts\`). It is what any
  library's turn costs at least, on this machine, in this run.
- Each peer uses its own scripted or mock model (ported in \`packages/bench/src/peers.ts\`: AI SDK 6
  \`MockLanguageModelV3\`, OpenAI Agents \`ScriptedModel\` with tracing disabled, LangChain
  \`fakeModel\`, pi-ai's faux provider).

${turnSection(report, false)}

## turnkit figures

${table(FIGURE_HEADER, figureRows(report), true)}

## \`step\` over a long turn

One turn of ${int(report.longTurn.rounds)} tool rounds (a reply with one call, its result, the
compaction: ${report.longTurn.transitionsPerRound} transitions a round), nanoseconds per transition
for each block of ${int(report.longTurn.block)} rounds (the median of three passes). A cost that
grew with the turn would rise along the rows.

${table(longTurnHeader(report), longTurnRows(report), true)}

## Targets

${table(TARGET_HEADER, targets, true)}

## What bounds it

${whatBoundsIt(report)}

${PROFILE_HEADING}

${profileSection(report)}

## Reproduce

\`pnpm bench\` (it builds the packages it measures first; \`--write\` rewrites this page, \`--quick\`
runs turnkit and the floor only with small counts, as CI does, and asserts no timing; a full run
exits with an error when turnkit misses its speed bar, the first two targets above). \`pnpm bench --per-turn --write\`
runs only the per-turn comparison and rewrites only its parts: the per-turn table, the first two
targets, the time per turn under "What bounds it" and the profile. \`pnpm bench --store [--postgres URL] --write\`
measures durable turns and rewrites their section only; \`pnpm bench --check --write\` the model
checker's. The first run installs the peers into
\`packages/bench/.peers\` with npm (they are never part of \`pnpm install\`). The process re-runs itself
with \`--expose-gc\` for the heap and allocation figures.
`;
}
