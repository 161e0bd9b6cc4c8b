import { runTurn } from '@turnkit/inline';
import { connectMcpServers } from '@turnkit/mcp';
import { call, scriptedModel, text, toolCalls, transcriptLines } from '@turnkit/testing';

// The server of weather-server.mjs, started as a child process (stdio) in this folder.
const mcp = await connectMcpServers({
  weather: { command: 'node', args: ['weather-server.mjs'], cwd: import.meta.dirname, trusted: true },
});
try {
  const model = scriptedModel([toolCalls(call('weather__forecast', { city: 'Oslo' })), text('It will be sunny in Oslo.')]);
  const result = await runTurn({ model, tools: mcp.tools, input: 'Weather in Oslo?' });
  console.log(transcriptLines(result.transcript).join('\n'));
} finally {
  await mcp.close();
}
