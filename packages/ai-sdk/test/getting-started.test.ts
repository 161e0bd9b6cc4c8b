// docs/getting-started.md: its examples are shown verbatim, and run (the real-model one against
// the fake Chat Completions server instead of Ollama).
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type FakeOpenAIServer, startFakeOpenAIServer } from '@turnkit/testing';
import { wireReply } from './wire.js';

const doc = readFileSync(new URL('../../../docs/getting-started.md', import.meta.url), 'utf8');
const codeBlocks = [...doc.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]);
const example = (name: string): string => readFileSync(new URL(`../examples/getting-started/${name}`, import.meta.url), 'utf8');

let server: FakeOpenAIServer;
beforeEach(async () => {
  server = await startFakeOpenAIServer();
});
afterEach(async () => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  await server.close();
});

/** Runs an example module (it runs on import) and returns what it logged. */
async function runExample(name: string): Promise<string[]> {
  const logged: string[] = [];
  vi.stubEnv('OPENAI_COMPATIBLE_BASE_URL', server.baseURL);
  vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(' ')));
  await import(`../examples/getting-started/${name}`);
  vi.restoreAllMocks();
  return logged;
}

describe('docs/getting-started.md', () => {
  it('shows agent.ts, first-turn.ts and real-model.ts as they are, and the install line', () => {
    // The last block is @turnkit/inline's agent example (its own test runs it).
    const serverAgent = readFileSync(new URL('../../inline/test/agent-server-example.test.ts', import.meta.url), 'utf8');
    expect(codeBlocks).toEqual([example('agent.ts'), example('first-turn.ts'), example('real-model.ts'), serverAgent]);
    expect(doc).toContain('npm i @turnkit/core @turnkit/dispatch @turnkit/inline @turnkit/testing zod\n');
  });

  it('the first turn prints what the page says', async () => {
    const printed = doc.split('It prints:\n\n```text\n')[1]?.split('```')[0];
    expect(`${(await runExample('first-turn.js')).join('\n')}\n`).toBe(printed);
  });

  it('the real-model turn runs the tool round against a Chat Completions server', async () => {
    const weatherCall = { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' };
    server.reply(wireReply('json', { toolCalls: [weatherCall] }), wireReply('json', { text: 'Clear, 18 °C.' }));
    expect(await runExample('real-model.js')).toEqual(['stopped completed', 'Clear, 18 °C.']);
    expect(server.requests.map((r) => r.body.model)).toEqual(['qwen3:8b', 'qwen3:8b']);
    expect(server.requests[1]!.body.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_1',
      content: '{"city":"Paris","tempC":18,"sky":"clear"}',
    });
  });
});
