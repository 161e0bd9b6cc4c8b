import { createDispatcher, defineTool } from '@turnkit/dispatch';
import { z } from 'zod';

const files: Record<string, string> = { 'notes.txt': 'buy milk' };

const readFile = defineTool({
  name: 'read_file',
  description: 'Reads a text file from the workspace.',
  input: z.object({ path: z.string() }),
  readOnly: true,
  execute: ({ path }) => files[path] ?? `There is no file '${path}'.`,
});

const shell = defineTool({
  name: 'shell',
  description: 'Runs a shell command.',
  input: z.object({ cmd: z.string() }),
  timeoutMs: 10_000,
  execute: ({ cmd }) => `ran: ${cmd}`, // a real tool would spawn a process and honour ctx.signal
});

const decisions: string[] = [];
const dispatcher = createDispatcher({
  tools: [readFile, shell],
  permissions: { deny: ['shell:cmd=rm *'], allow: ['shell:cmd=ls*'], ask: ['shell'] },
  onDecision: (r) => decisions.push(`${r.callId} ${r.decision} ${r.source}`),
});

const ctx = { turnId: 'turn-1' };
const { results, parked } = await dispatcher.dispatch(
  [
    { id: '1', name: 'read_file', input: { path: 'notes.txt' } },
    { id: '2', name: 'shell', input: { cmd: 'ls -la' } },
    { id: '3', name: 'shell', input: { cmd: 'rm -rf /' } },
    { id: '4', name: 'shell', input: { cmd: 'git push' } },
    { id: '5', name: 'search', input: { q: 'milk' } },
  ],
  ctx,
);
// results: ids 1, 2, 3 (denied), 5 (unknown tool), in call order; parked: id 4.

// Later, a person approves call 4 and says "always allow shell in this session".
const waiting = parked.map((p) => p.call);
for (const call of waiting) dispatcher.recordDecision(call, { type: 'approve', remember: 'tool' });
const approved = await dispatcher.executeApproved(waiting, ctx);
// approved: [{ callId: '4', output: 'ran: git push', ... }]; grants(): [{ scope: 'tool', tool: 'shell' }]
export { approved, decisions, dispatcher, parked, results }; // for test/docs.test.ts; not in the docs
