// The store's model check as one run: the bounded explorations of the real protocol and the
// planted mutants, and the section of docs/model-checking.md that presents the figures (written by
// `turnkit check --store --write docs/model-checking.md`; a test compares the page with a new run).

import { exploreStore, type StoreCheckResult, type StoreInvariant } from './explore.js';
import { PROTOCOL_MUTANTS, type ProtocolMutant, THREAD_CHECK } from './mutants.js';
import type { Protocol } from '@turnkit/store/internal';
import type { WorldConfig } from './types.js';

/** One bounded exploration: a name and its world. */
export interface StoreCheckSpec {
  /** What the exploration checks, in words. */
  readonly name: string;
  /** The world explored: workers, turns, deaths, pauses, retries, cancels. */
  readonly config: WorldConfig;
}

const PARKED_TURN = {
  id: 't1',
  calls: [
    { id: 'plain', parked: false },
    { id: 'parked', parked: true },
  ],
} as const;

/** The explorations `turnkit check --store` runs; the mutants run on the first, or the one they name. */
export const STORE_CHECKS: readonly StoreCheckSpec[] = [
  { name: 'one turn, a death and a pause', config: { workers: 2, deaths: 1, pauses: 1, turns: [PARKED_TURN] } },
  {
    name: 'two turns, a death',
    config: { workers: 2, deaths: 1, pauses: 0, turns: [PARKED_TURN, { id: 't2', calls: [{ id: 'plain', parked: false }] }] },
  },
  {
    name: 'one turn, a retry, a death and a pause',
    config: { workers: 2, deaths: 1, pauses: 1, retries: 1, turns: [PARKED_TURN] },
  },
  { name: 'one turn, a cancel and a death', config: { workers: 2, deaths: 1, pauses: 0, cancels: 1, turns: [PARKED_TURN] } },
  {
    name: THREAD_CHECK,
    config: {
      workers: 2,
      deaths: 1,
      pauses: 0,
      turns: [
        { ...PARKED_TURN, thread: 'th' },
        { id: 't2', calls: [{ id: 'plain', parked: false }], thread: 'th', submitWhileParked: 't1' },
      ],
    },
  },
];

export interface MutantOutcome {
  readonly mutant: ProtocolMutant;
  readonly result: StoreCheckResult;
  /** The exploration found the mutant's invariant broken. */
  readonly caught: boolean;
}

/** What `runStoreChecks` found: each exploration's result, and whether each mutant was caught. */
export interface StoreCheckReport {
  /** Each exploration with its result. */
  readonly explorations: readonly { readonly spec: StoreCheckSpec; readonly result: StoreCheckResult }[];
  /** Each mutant and whether its invariant caught it. */
  readonly mutants: readonly MutantOutcome[];
}

export type StoreCheckProgress = (progress: { readonly check: string; readonly states: number; readonly depth: number }) => void;

export interface RunStoreChecksOptions {
  /** The explorations (default STORE_CHECKS). */
  readonly checks?: readonly StoreCheckSpec[];
  /** The protocol the explorations check (default the one the worker runs; the mutants always wrap that one). */
  readonly protocol?: Protocol;
  readonly onProgress?: StoreCheckProgress;
}

/** Runs every exploration of `checks`, then each mutant on the first. */
export function runStoreChecks(options: RunStoreChecksOptions = {}): StoreCheckReport {
  const checks = options.checks ?? STORE_CHECKS;
  const progress = (check: string) => (p: { states: number; depth: number }) =>
    options.onProgress?.({ check, states: p.states, depth: p.depth });
  const explorations = checks.map((spec) => ({
    spec,
    result: exploreStore({
      config: spec.config,
      ...(options.protocol === undefined ? {} : { protocol: options.protocol }),
      onProgress: progress(spec.name),
    }),
  }));
  const first = checks[0];
  const mutants =
    first === undefined
      ? []
      : PROTOCOL_MUTANTS.map((mutant) => {
          const on = checks.find((c) => c.name === mutant.check) ?? first;
          const result = exploreStore({
            config: on.config,
            protocol: mutant.protocol,
            stopAt: mutant.invariant,
            onProgress: progress(mutant.name),
          });
          return { mutant, result, caught: result.violations.some((v) => v.invariant === mutant.invariant) };
        });
  return { explorations, mutants };
}

/** True when every exploration was exhaustive without a violation and every mutant was caught. */
export function storeCheckPassed(report: StoreCheckReport): boolean {
  return (
    report.explorations.every((e) => e.result.exhaustive && e.result.violationCount === 0) &&
    report.mutants.every((m) => m.caught)
  );
}

/**
 * The HTML comments around the generated section in docs/model-checking.md (`withStoreCheckSection` replaces what is
 * between them).
 */
export const STORE_CHECK_MARKERS = {
  start: '<!-- store-check:start (written by `turnkit check --store --write docs/model-checking.md`; do not edit) -->',
  end: '<!-- store-check:end -->',
} as const;

const count = (n: number): string => n.toLocaleString('en-US');

function describeWorld(config: WorldConfig): string {
  return config.turns
    .map((t) => {
      const about = [
        t.thread === undefined ? '' : `thread ${t.thread}`,
        t.submitWhileParked === undefined ? '' : `submitted while ${t.submitWhileParked} is parked`,
      ].filter((a) => a !== '');
      return `${t.id} (${t.calls.map((c) => c.id).join(', ')})${about.length === 0 ? '' : ` [${about.join(', ')}]`}`;
    })
    .join(', ');
}

/** The markdown section (markers included) for a report: no timings, so a run on any machine writes the same. */
export function storeCheckSection(report: StoreCheckReport): string {
  const lines = [
    STORE_CHECK_MARKERS.start,
    '| exploration | workers | turns (calls) | deaths | pauses | retries | cancels | states | transitions | depth | every turn ended | deadlocked | violations |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...report.explorations.map(({ spec, result: r }) => {
      const cells = [
        spec.name,
        spec.config.workers,
        describeWorld(spec.config),
        spec.config.deaths,
        spec.config.pauses,
        spec.config.retries ?? 0,
        spec.config.cancels ?? 0,
        count(r.states),
        count(r.transitions),
        `${r.depth}${r.exhaustive ? '' : ' (cut off)'}`,
        count(r.ended),
        count(r.deadlocked),
        count(r.violationCount),
      ];
      return `| ${cells.join(' | ')} |`;
    }),
    '',
    '| mutant | what it changes | invariant | caught | worlds explored | shortest counterexample |',
    '|---|---|---|---|---|---|',
    ...report.mutants.map(({ mutant, result, caught }) => {
      const found = result.violations.find((v) => v.invariant === mutant.invariant);
      const path = found === undefined ? 'none' : `\`${found.path.join(' → ')}\``;
      return `| ${mutant.name} | ${mutant.description} | ${mutant.invariant} | ${caught ? 'yes' : '**no**'} | ${count(result.states)} | ${path} |`;
    }),
    STORE_CHECK_MARKERS.end,
  ];
  return lines.join('\n');
}

/** `page` with `section` in place of the one between the markers; an error when the page has no markers. */
export function withStoreCheckSection(page: string, section: string): string {
  const start = page.indexOf(STORE_CHECK_MARKERS.start);
  const end = page.indexOf(STORE_CHECK_MARKERS.end);
  if (start === -1 || end < start)
    throw new Error(
      `The page has no store-check section: add the lines ${STORE_CHECK_MARKERS.start} and ${STORE_CHECK_MARKERS.end} where it goes.`,
    );
  return `${page.slice(0, start)}${section}${page.slice(end + STORE_CHECK_MARKERS.end.length)}`;
}

export type { StoreInvariant };
