// `turnkit check --store`: the durable protocol's model check (@turnkit/check/internal): every
// bounded exploration of the real protocol with the invariants on every edge, then each planted
// mutant, which must be caught. `--write <file>` replaces the figures' section of that page
// (docs/model-checking.md). A progress bar runs on stderr on a TTY.

import { readFileSync, writeFileSync } from 'node:fs';
import {
  runStoreChecks,
  STORE_INVARIANTS,
  storeCheckPassed,
  storeCheckSection,
  withStoreCheckSection,
  type StoreCheckReport,
  type StoreCheckSpec,
} from '@turnkit/check/internal';
import { definedProps } from '@turnkit/core/internal';
import type { Protocol } from '@turnkit/store/internal';
import pc from 'picocolors';
import { UsageError } from '../errors.js';
import { duration } from '../format.js';
import { stderrBar } from '../progress-bar.js';

export interface CheckStoreOptions {
  /** A markdown page whose store-check section is replaced with the figures. */
  readonly write?: string;
  /** The explorations and the protocol they check. Internal, not flags: tests pass small ones and a broken protocol. */
  readonly checks?: readonly StoreCheckSpec[];
  readonly protocol?: Protocol;
}

/** Runs the protocol's model check, prints the figures; resolves to 1 when a check fails or a mutant escapes, else 0. */
export async function checkStoreCommand(o: CheckStoreOptions): Promise<number> {
  const page = o.write === undefined ? null : readPage(o.write);
  const out = (line = ''): void => void process.stdout.write(`${line}\n`);
  out(
    `${pc.bold('turnkit check --store')} ${pc.dim('· the durable protocol: claims, leases, fencing, the journal, the inbox, recovery')}`,
  );
  const report = withProgress((onProgress) =>
    runStoreChecks({ ...definedProps({ checks: o.checks, protocol: o.protocol }), onProgress }),
  );
  printReport(report, out);
  const passed = storeCheckPassed(report);
  if (o.write !== undefined && page !== null) {
    writeFileSync(o.write, withStoreCheckSection(page, storeCheckSection(report)));
    out(pc.dim(`figures written to ${o.write}`));
  }
  out(
    passed
      ? pc.green(pc.bold('✔ no invariant was violated, and every mutant was caught'))
      : pc.red(pc.bold('✖ the check failed')),
  );
  return passed ? 0 : 1;
}

function readPage(path: string): string {
  let page: string;
  try {
    page = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`--write ${path}: the page cannot be read (${(error as Error).message}).`);
  }
  try {
    withStoreCheckSection(page, '');
  } catch (error) {
    throw new UsageError(`--write ${path}: ${(error as Error).message}`);
  }
  return page;
}

function withProgress(run: (onProgress: (p: { check: string; states: number; depth: number }) => void) => StoreCheckReport) {
  const bar = stderrBar('{check} · depth {depth} · {states} worlds');
  bar?.start(1, 0, { check: 'exploring', states: 1, depth: 0 });
  try {
    return run((p) => bar?.update(0, { check: p.check, states: p.states, depth: p.depth }));
  } finally {
    bar?.stop();
  }
}

function printReport(report: StoreCheckReport, out: (line?: string) => void): void {
  out('invariants (checked on every edge; 5 on the explored graph)');
  for (const [n, text] of Object.entries(STORE_INVARIANTS)) out(`  ${n}. ${text}`);
  for (const { spec, result } of report.explorations) {
    const c = spec.config;
    out();
    out(
      `${pc.bold(spec.name)} ${pc.dim(`· ${c.workers} workers · ${c.turns.length} turn(s) · ${c.deaths} death(s) · ${c.pauses} pause(s) · ${c.retries ?? 0} retries · ${c.cancels ?? 0} cancels`)}`,
    );
    const row = (name: string, value: string): void => out(`  ${name.padEnd(13)}${value}`);
    row('states', result.states.toLocaleString('en-US'));
    row('transitions', result.transitions.toLocaleString('en-US'));
    row('depth', `${result.depth}${result.exhaustive ? pc.green(' (exhaustive)') : pc.yellow(' (cut off)')}`);
    row('ended', `${result.ended.toLocaleString('en-US')} worlds where every turn ended`);
    row('deadlocked', String(result.deadlocked));
    row('violations', String(result.violationCount));
    row('time', duration(result.ms));
    for (const v of result.violations) {
      out(`  ${pc.red(`✖ invariant ${v.invariant}`)}: ${v.message}`);
      out(pc.dim(`      path: ${v.path.join(' → ')}`));
    }
  }
  out();
  out('mutants (each must break its invariant)');
  for (const { mutant, result, caught } of report.mutants) {
    const found = result.violations.find((v) => v.invariant === mutant.invariant);
    const mark = caught ? pc.green('✔ caught') : pc.red('✖ escaped');
    out(`  ${mark} ${mutant.name} ${pc.dim(`(invariant ${mutant.invariant}, ${result.states.toLocaleString('en-US')} worlds)`)}`);
    if (found !== undefined) out(pc.dim(`      ${found.path.join(' → ')}`));
  }
}
