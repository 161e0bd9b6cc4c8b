// The dispatcher's state holders on their own: the grant list and the budget ledger.
import { describe, expect, it } from 'vitest';
import { BudgetLedger } from '../../src/budget.js';
import { GrantList } from '../../src/grants.js';

describe('GrantList', () => {
  it('keeps grants in order, once each, and lists copies', () => {
    const grants = new GrantList();
    grants.add({ scope: 'tool', tool: 'shell' });
    grants.add({ scope: 'tool', tool: 'shell' });
    grants.add({ scope: 'tool', pattern: 'git:args=status' });
    const listed = grants.list();
    expect(listed).toEqual([
      { scope: 'tool', tool: 'shell' },
      { scope: 'tool', pattern: 'git:args=status' },
    ]);
    (listed as unknown[]).length = 0;
    expect(grants.list()).toHaveLength(2);
  });

  it('refuses a malformed grant with the valid forms', () => {
    const grants = new GrantList();
    expect(() => grants.add({ scope: 'tool' })).toThrow(/Grant \{"scope":"tool"\} is invalid: use \{ scope: 'session' \}/);
    expect(() => grants.add({ scope: 'tool', tool: 'bad name!' })).toThrow(TypeError);
    expect(grants.list()).toEqual([]);
  });

  it('matches a tool case-insensitively, a pattern on the input, and a session grant on anything', () => {
    const grants = new GrantList();
    grants.add({ scope: 'tool', tool: 'Shell' });
    grants.add({ scope: 'tool', pattern: 'git:args=status' });
    expect(grants.match('shell', {})).toEqual({ scope: 'tool', tool: 'Shell' });
    expect(grants.match('git', { args: ['status'] })).toEqual({ scope: 'tool', pattern: 'git:args=status' });
    expect(grants.match('git', { args: ['push'] })).toBeUndefined();
    grants.add({ scope: 'session' });
    expect(grants.match('git', { args: ['push'] })).toEqual({ scope: 'session' });
  });
});

describe('BudgetLedger', () => {
  it('counts reserved calls against the limits before they are recorded', () => {
    const ledger = new BudgetLedger({ maxCalls: 3, perTool: new Map([['shell', 1]]) }, { total: 1, perTool: {} });
    expect(ledger.reserve('shell')).toBeUndefined();
    expect(ledger.reserve('shell')).toEqual({
      source: 'budget:perTool:shell',
      text: "Call to 'shell' not run: this tool's budget is used up (budget.perTool.shell = 1). Use another tool or answer with what you have.",
    });
    expect(ledger.reserve('echo')).toBeUndefined();
    expect(ledger.reserve('echo')).toEqual({
      source: 'budget:maxCalls',
      text: "Call to 'echo' not run: the tool-call budget is used up (budget.maxCalls = 3). Answer with what you have.",
    });
    expect(ledger.usage()).toEqual({ total: 1, perTool: {} });
    ledger.record('shell');
    ledger.record('echo');
    expect(ledger.usage()).toEqual({ total: 3, perTool: { shell: 1, echo: 1 } });
  });

  it('starts from restored usage and has no limit without one', () => {
    const ledger = new BudgetLedger({ maxCalls: undefined, perTool: new Map() }, { total: 7, perTool: { shell: 7 } });
    for (let i = 0; i < 5; i++) expect(ledger.reserve('shell')).toBeUndefined();
    expect(ledger.usage()).toEqual({ total: 7, perTool: { shell: 7 } });
  });
});
