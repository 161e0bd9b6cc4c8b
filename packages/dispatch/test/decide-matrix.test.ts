// The whole decision matrix: every combination of the facts `decide` reads, checked against the
// written table in docs/reference/dispatcher.md ("The decision table"). The table is read from the docs, so the
// docs and the code cannot say different things.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decide } from '../src/index.js';
import type { DecideInput } from '../src/stages/policy.js';
import { testLog } from '../../../test-log.ts';

const docs = readFileSync(new URL('../../../docs/reference/dispatcher.md', import.meta.url), 'utf8');

interface Row {
  readonly row: string;
  readonly when: string;
  readonly decision: string;
  readonly source: string;
}

/** The rows of the decision table, as written. */
function tableRows(): Row[] {
  const block = /<!-- decision table -->\n([\s\S]*?)<!-- end of decision table -->/.exec(docs)?.[1] ?? '';
  return block
    .split('\n')
    .slice(2)
    .filter((line) => line.startsWith('|'))
    .map((line) => {
      const [row, when, decision, source] = line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim());
      return { row: row ?? '', when: when ?? '', decision: decision ?? '', source: (source ?? '').replaceAll('`', '') };
    });
}

const PATTERNS = { denyRule: 'shell:cmd=rm*', allowRule: 'shell:cmd=ls*', askRule: 'shell' } as const;

/** What each "when" of the table means, as a predicate on the facts. */
const WHEN: Record<string, (f: DecideInput) => boolean> = {
  '`ambiguousArgument`': (f) => f.ambiguousArgument !== undefined,
  '`denyRule`': (f) => f.denyRule !== undefined,
  '`grant`': (f) => f.grant !== undefined,
  '`allowRule`': (f) => f.allowRule !== undefined,
  '`policy` is an error': (f) => f.policy?.kind === 'error',
  '`policy` is deny': (f) => f.policy?.kind === 'deny',
  '`needsApproval` is an error': (f) => f.needsApproval?.kind === 'error',
  '`hookApproval`': (f) => f.hookApproval !== undefined,
  '`askRule`': (f) => f.askRule !== undefined,
  '`policy` is ask': (f) => f.policy?.kind === 'ask',
  '`policy` is allow': (f) => f.policy?.kind === 'allow',
  '`needsApproval`': (f) => f.needsApproval !== undefined,
  '`readOnly`': (f) => f.readOnly,
  '`defaultDecision` is allow': (f) => f.defaultDecision === 'allow',
  otherwise: () => true,
  'an ask, with `yolo`': (f) => f.yolo === true,
  'an ask, with `nonInteractive`': (f) => f.nonInteractive,
};

/** The expected decision and source of the table for these facts. */
function expected(rows: readonly Row[], facts: DecideInput): { decision: string; source: string } {
  const first = rows.find((r) => r.row !== 'then' && (WHEN[r.when] as (f: DecideInput) => boolean)(facts)) as Row;
  let out = { decision: first.decision, source: first.source };
  if (out.decision === 'ask') {
    const then = rows.find((r) => r.row === 'then' && (WHEN[r.when] as (f: DecideInput) => boolean)(facts));
    if (then !== undefined) out = { decision: then.decision, source: then.source };
  }
  const pattern = out.source.startsWith('rule:deny')
    ? PATTERNS.denyRule
    : out.source.startsWith('rule:allow')
      ? PATTERNS.allowRule
      : PATTERNS.askRule;
  return {
    decision: out.decision,
    source: out.source.replace('<pattern>', pattern).replace('<scope>', 'session').replace('<name>', 'ci'),
  };
}

/** Every combination of the facts. */
function* combinations(): Generator<DecideInput> {
  const bools = [false, true];
  const policies = [
    undefined,
    { kind: 'allow' },
    { kind: 'deny', reason: 'no' },
    { kind: 'ask', reason: 'costly' },
    { kind: 'error', reason: 'broke' },
  ] as const;
  const needs = [undefined, { kind: 'always' }, { kind: 'for_input' }, { kind: 'error', reason: 'boom' }] as const;
  for (const yolo of bools)
    for (const ambiguous of bools)
      for (const deny of bools)
        for (const grant of bools)
          for (const allow of bools)
            for (const ask of bools)
              for (const policy of policies)
                for (const needsApproval of needs)
                  for (const readOnly of bools)
                    for (const defaultDecision of ['ask', 'allow'] as const)
                      for (const nonInteractive of bools)
                        for (const hook of bools)
                          yield {
                            tool: 'shell',
                            readOnly,
                            nonInteractive,
                            yolo,
                            defaultDecision,
                            ...(ambiguous ? { ambiguousArgument: 'cmd' } : {}),
                            ...(deny ? { denyRule: PATTERNS.denyRule } : {}),
                            ...(grant ? { grant: { scope: 'session' } as const } : {}),
                            ...(allow ? { allowRule: PATTERNS.allowRule } : {}),
                            ...(ask ? { askRule: PATTERNS.askRule } : {}),
                            ...(policy === undefined ? {} : { policy }),
                            ...(needsApproval === undefined ? {} : { needsApproval }),
                            ...(hook ? { hookApproval: 'ci' } : {}),
                          };
}

describe('decide against the written decision table', () => {
  it('the table in docs/reference/dispatcher.md has every row the test knows, and only those', () => {
    const rows = tableRows();
    expect(rows.map((r) => r.when)).toEqual(Object.keys(WHEN));
  });

  it('every combination of yolo, an ambiguous key, a deny, a grant, an allow, an ask, the policy, needsApproval, readOnly, the default, nonInteractive and a hook pre-approval', () => {
    const rows = tableRows();
    let count = 0;
    const mismatches: string[] = [];
    for (const facts of combinations()) {
      count++;
      const { decision, source } = decide(facts);
      const want = expected(rows, facts);
      if (decision !== want.decision || source !== want.source)
        mismatches.push(`${JSON.stringify(facts)}: got ${decision} ${source}, the table says ${want.decision} ${want.source}`);
    }
    testLog(`decide matrix: ${count} combinations, ${mismatches.length} mismatches`);
    expect(mismatches.slice(0, 5)).toEqual([]);
    expect(count).toBe(20_480);
  });

  it('a denial, an ask and an allow always carry a reason in words', () => {
    for (const facts of combinations()) expect(decide(facts).reason.length).toBeGreaterThan(0);
  });
});
