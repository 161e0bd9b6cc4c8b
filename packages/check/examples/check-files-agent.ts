import { checkAgent, neverAfter } from '@turnkit/check';
import { agents, properties } from './files-agent.ts';

/** Checks the files agent with one more property, and writes a test of the first violation to `out`. */
export async function checkFilesAgent(out: string): Promise<string[]> {
  const result = await checkAgent(agents.files, {
    properties: [...properties, neverAfter('delete_file', 'read_file')],
    maxCallsPerReply: 1,
    out: { file: out, agentImport: './files-agent.ts', agentName: 'files' },
  });
  if (!result.exhaustive) throw new Error(`cut off at depth ${result.depth}`);
  return result.violations.map((v) => `${v.property}: ${v.path.map((s) => s.label).join(' → ')}`);
}
