// Approval-gated deletion: `delete_file` needs a person's approval. On a terminal turnkit asks;
// elsewhere the turn suspends to a file and prints the `turnkit resume` command to continue.
// The files live in memory (nothing on disk is touched).
//
//   turnkit run packages/cli/examples/delete-files.ts
//   turnkit resume ./turnkit-suspended-<turnId>.json --approve call_2 --reject call_3='keep it'

import { defineTool } from '@turnkit/dispatch';
import type { Message } from '@turnkit/core';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';
import { z } from 'zod';
import type { ScenarioFile } from '@turnkit/cli';

/** A tiny in-memory workspace: path → size in bytes. */
const files = new Map<string, number>([
  ['tmp/build.log', 48_213],
  ['tmp/cache.bin', 7_340_032],
  ['tmp/notes.md', 1_204],
]);

const listFiles = defineTool({
  name: 'list_files',
  description: 'Lists the files under a directory with their sizes in bytes.',
  input: z.object({ dir: z.string() }),
  readOnly: true,
  execute: ({ dir }) => [...files].filter(([path]) => path.startsWith(`${dir.replace(/\/$/, '')}/`)).map(([path, bytes]) => ({ path, bytes })),
});

const deleteFile = defineTool({
  name: 'delete_file',
  description: 'Deletes one file. A person must approve each deletion.',
  input: z.object({ path: z.string() }),
  needsApproval: true,
  execute: ({ path }) => {
    if (!files.delete(path)) throw new Error(`${path} does not exist`);
    return { deleted: path };
  },
});

/** The last answer depends on what the person decided, which the tool results tell. */
function summary(messages: readonly Message[]): string {
  const results = messages.flatMap((m) => (m.role === 'tool' && m.result.name === 'delete_file' ? [m.result] : []));
  const lines = results.map((r) => (r.isError ? `- Not deleted (${String(r.output)})` : `- Deleted ${String((r.output as { deleted?: unknown }).deleted)}`));
  return ['Clean-up of tmp/:', ...lines].join('\n');
}

export const scenario: ScenarioFile = {
  input: 'Free some space in tmp/: delete the build log and the cache, keep my notes.',
  tools: [listFiles, deleteFile],
  // A function of `startAt` (the model calls already made), so that `turnkit resume`, a new
  // process, continues the script where the suspended run left it.
  model: ({ startAt }) =>
    scriptedModel(
      [
        toolCalls(call('list_files', { dir: 'tmp' }), { usage: { inputTokens: 160, outputTokens: 20 } }),
        toolCalls(call('delete_file', { path: 'tmp/build.log' }), call('delete_file', { path: 'tmp/cache.bin' }), {
          text: 'Deleting the two files you named.',
          usage: { inputTokens: 260, outputTokens: 44 },
        }),
        (request) => text(summary(request.messages), { usage: { inputTokens: 380, outputTokens: 30 } }),
      ],
      { startAt },
    ),
};
