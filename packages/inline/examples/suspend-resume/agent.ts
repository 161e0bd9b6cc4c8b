import { z } from 'zod';
import { defineTool } from '@turnkit/dispatch';
import { call, text, toolCalls } from '@turnkit/testing';

// A tool a person must approve before it runs.
export const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys a service.',
  input: z.object({ service: z.string() }),
  needsApproval: true,
  execute: ({ service }) => `deployed ${service} from process ${process.pid}`,
});
export const tools = [deploy];

// One reply per model call; a real model takes the place of this script.
export const script = [toolCalls(call('deploy', { service: 'api' })), text('api is deployed.')];
