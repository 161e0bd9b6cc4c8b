// docs/tools.md shows working code: its main example is test/docs-example.ts, word for word; its
// retry example and the dispatcher reference's audit example are the test files under examples/.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDispatcher, defineTool } from '../src/index.js';

// The example file ends with one export line for this test; the docs show everything above it.
const example = readFileSync(new URL('./docs-example.ts', import.meta.url), 'utf8').replace(/^export \{.*\n$/m, '');
const docs = readFileSync(new URL('../../../docs/tools.md', import.meta.url), 'utf8');

describe('docs/tools.md', () => {
  it('contains the main example exactly as tested', () => {
    const block = /<!-- main example: packages\/dispatch\/test\/docs-example\.ts -->\n```ts\n([\s\S]*?)```/.exec(docs);
    expect(block?.[1]).toBe(example);
  });

  it.each([
    ['retry-example.test.ts', 'docs/tools.md'],
    ['audit-example.test.ts', 'docs/reference/dispatcher.md'],
  ])('shows examples/%s exactly as it runs, in %s', (file, page) => {
    const text = readFileSync(new URL(`../../../${page}`, import.meta.url), 'utf8');
    expect(text).toContain(readFileSync(new URL(`./examples/${file}`, import.meta.url), 'utf8').trim());
  });

  it('the main example gives the results the docs describe', async () => {
    const { results, parked, approved, decisions, dispatcher } = await import('./docs-example.js');
    expect(results).toEqual([
      { callId: '1', name: 'read_file', output: 'buy milk', isError: false },
      { callId: '2', name: 'shell', output: 'ran: ls -la', isError: false },
      { callId: '4', name: 'git', output: 'ran: git status', isError: false },
      {
        callId: '5',
        name: 'git',
        output: "Call to 'git' denied: denied by rule 'git:args=--force*'. Do not retry it unchanged; continue without it.",
        isError: true,
        errorKind: 'denied',
      },
      {
        callId: '7',
        name: 'search',
        output: "Unknown tool 'search'. Available tools: git, read_file, shell.",
        isError: true,
        errorKind: 'unknown_tool',
      },
    ]);
    expect(parked).toEqual([
      {
        call: { id: '3', name: 'shell', input: { cmd: 'ls -la; rm -rf /' } },
        input: { cmd: 'ls -la; rm -rf /' },
        reason: "matches ask rule 'shell'",
      },
      { call: { id: '6', name: 'git', input: { args: ['push'] } }, input: { args: ['push'] }, reason: "matches ask rule 'git'" },
    ]);
    expect(approved).toEqual([{ callId: '6', name: 'git', output: 'ran: git push', isError: false }]);
    expect(dispatcher.grants()).toEqual([]);
    expect(decisions).toEqual([
      '1 allow readonly',
      '2 allow rule:allow:shell:cmd=ls -la',
      '3 ask rule:ask:shell',
      '4 allow rule:allow:git:args=status',
      '5 deny rule:deny:git:args=--force*',
      '6 ask rule:ask:git',
      '7 deny unknown_tool',
      '3 user_rejected user',
      '6 user_approved user',
    ]);
  });

  // The commands docs/tools.md lists under "Patterns are not a security boundary".
  const bypasses = [' rm -rf /', '/bin/rm -rf /', '\\rm -rf /', 'echo; rm -rf /'];

  it('a deny glob over free text is not a boundary: each listed command gets past shell:cmd=rm*', async () => {
    const shell = defineTool({
      name: 'shell',
      description: 'Runs a command.',
      input: z.object({ cmd: z.string() }),
      execute: ({ cmd }) => `ran: ${cmd}`,
    });
    // With the default allow, as a dispatcher configured `defaultDecision: 'allow'` would run them.
    const dispatcher = createDispatcher({ tools: [shell], permissions: { deny: ['shell:cmd=rm*'] }, defaultDecision: 'allow' });
    const { results } = await dispatcher.dispatch(
      bypasses.map((cmd, i) => ({ id: `b${i}`, name: 'shell', input: { cmd } })),
      { turnId: 't' },
    );
    expect(results.map((r) => r.output)).toEqual(bypasses.map((cmd) => `ran: ${cmd}`));
  });

  it("the main example's rules park every one of them for a person instead", async () => {
    const { permissions } = await import('./docs-example.js');
    const shell = defineTool({
      name: 'shell',
      description: 'Runs a command.',
      input: z.object({ cmd: z.string() }),
      execute: ({ cmd }) => `ran: ${cmd}`,
    });
    const dispatcher = createDispatcher({ tools: [shell], permissions });
    const { results, parked } = await dispatcher.dispatch(
      bypasses.map((cmd, i) => ({ id: `b${i}`, name: 'shell', input: { cmd } })),
      { turnId: 't' },
    );
    expect(results).toEqual([]);
    expect(parked.map((p) => p.call.input)).toEqual(bypasses.map((cmd) => ({ cmd })));
  });
});
