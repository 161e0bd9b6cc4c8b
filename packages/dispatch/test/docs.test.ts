// docs/tools.md shows working code: its main example is test/docs-example.ts, word for word.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The example file ends with one export line for this test; the docs show everything above it.
const example = readFileSync(new URL('./docs-example.ts', import.meta.url), 'utf8').replace(/^export \{.*\n$/m, '');
const docs = readFileSync(new URL('../../../docs/tools.md', import.meta.url), 'utf8');

describe('docs/tools.md', () => {
  it('contains the main example exactly as tested', () => {
    const block = /<!-- main example: packages\/dispatch\/test\/docs-example\.ts -->\n```ts\n([\s\S]*?)```/.exec(docs);
    expect(block?.[1]).toBe(example);
  });

  it('the main example gives the results the docs describe', async () => {
    const { results, parked, approved, decisions, dispatcher } = await import('./docs-example.js');
    const grants = dispatcher.grants();
    expect(results).toEqual([
      { callId: '1', name: 'read_file', output: 'buy milk', isError: false },
      { callId: '2', name: 'shell', output: 'ran: ls -la', isError: false },
      {
        callId: '3',
        name: 'shell',
        output: "Call to 'shell' denied: denied by rule 'shell:cmd=rm *'. Do not retry it unchanged; continue without it.",
        isError: true,
      },
      { callId: '5', name: 'search', output: "Unknown tool 'search'. Available tools: read_file, shell.", isError: true },
    ]);
    expect(parked).toEqual([{ call: { id: '4', name: 'shell', input: { cmd: 'git push' } }, reason: "matches ask rule 'shell'" }]);
    expect(approved).toEqual([{ callId: '4', name: 'shell', output: 'ran: git push', isError: false }]);
    expect(grants).toEqual([{ scope: 'tool', tool: 'shell' }]);
    expect(decisions).toEqual([
      '1 allow readonly',
      '2 allow rule:allow:shell:cmd=ls*',
      '3 deny rule:deny:shell:cmd=rm *',
      '4 ask rule:ask:shell',
      '5 deny unknown_tool',
      '4 user_approved user:remember_tool',
    ]);
  });
});
