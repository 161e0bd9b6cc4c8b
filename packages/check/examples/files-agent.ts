// An agent that reads and deletes files, and what it must never do. docs/check-your-agent.md checks
// it with `turnkit check --agent` and `checkAgent`.
import { neverWithoutApproval, property, ran } from '@turnkit/check';
import { defineTool } from '@turnkit/dispatch';
import * as z from 'zod';

const readFile = defineTool({
  name: 'read_file',
  description: 'Read a text file.',
  input: z.object({ path: z.string() }),
  readOnly: true,
  execute: ({ path }) => `(the text of ${path})`,
});

const deleteFile = defineTool({
  name: 'delete_file',
  description: 'Delete a file.',
  input: z.object({ path: z.string() }),
  needsApproval: true,
  execute: ({ path }) => `deleted ${path}`,
});

export const agents = {
  files: {
    tools: [readFile, deleteFile],
    permissions: {
      // Secrets stay secret, whoever asks.
      deny: ['read_file:path=/etc/*'],
      // Notes may be read without asking.
      allow: ['read_file:path=/home/me/notes/*'],
    },
    limits: { maxIterations: 2 },
  },
};

export const properties = [
  neverWithoutApproval('delete_file'),
  property('nothing under /etc is read', (trace) =>
    trace.every((r) => !(ran(r) && r.tool === 'read_file' && String((r.input as { path?: unknown }).path).startsWith('/etc/'))),
  ),
];
