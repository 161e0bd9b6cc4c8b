import { createDispatcher, defineTool, type Permissions } from '@turnkit/dispatch';
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

const git = defineTool({
  name: 'git',
  description: 'Runs git with these arguments, without a shell.',
  input: z.object({ args: z.array(z.string()).min(1) }),
  execute: ({ args }) => `ran: git ${args.join(' ')}`, // a real tool would pass args to git as an array
});

// Ask by default; allow exact commands and structured arguments; deny by argument, element by element.
const permissions: Permissions = {
  deny: ['git:args=--force*', 'git:args=-f'],
  allow: ['shell:cmd=ls -la', 'git:args=status'],
  ask: ['shell', 'git'],
};

const decisions: string[] = [];
const dispatcher = createDispatcher({
  tools: [readFile, shell, git],
  permissions,
  onDecision: (r) => decisions.push(`${r.callId} ${r.decision} ${r.source}`),
});

const ctx = { turnId: 'turn-1' };
const { results, parked } = await dispatcher.dispatch(
  [
    { id: '1', name: 'read_file', input: { path: 'notes.txt' } },
    { id: '2', name: 'shell', input: { cmd: 'ls -la' } },
    { id: '3', name: 'shell', input: { cmd: 'ls -la; rm -rf /' } },
    { id: '4', name: 'git', input: { args: ['status'] } },
    { id: '5', name: 'git', input: { args: ['push', '--force'] } },
    { id: '6', name: 'git', input: { args: ['push'] } },
    { id: '7', name: 'search', input: { q: 'milk' } },
  ],
  ctx,
);
// results: ids 1, 2, 4, 5 (denied: an element matches '--force*'), 7 (unknown tool), in call order.
// parked: ids 3 (an allow glob 'ls*' would have let it through) and 6.

// Later, a person rejects the chained command and approves the push.
const approve = (call: { name: string }) => call.name === 'git';
for (const { call } of parked) dispatcher.recordDecision(call, approve(call) ? { type: 'approve' } : { type: 'reject', reason: 'it chains a second command' }, ctx);
// Each parked call runs with the input it parked with (`input`: what the before-hooks left).
const approved = await dispatcher.executeApproved(parked.filter((p) => approve(p.call)).map((p) => ({ ...p.call, input: p.input ?? p.call.input })), ctx);
// approved: [{ callId: '6', output: 'ran: git push', ... }]; core writes the result of the rejected call 3.
export { approved, decisions, dispatcher, parked, permissions, results }; // for test/docs.test.ts; not in the docs
