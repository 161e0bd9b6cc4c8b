// Keeps docs/providers.md honest: its imports exist, and its local-server and option examples run
// (against the fake server instead of Ollama or vLLM).
import { readFileSync } from 'node:fs';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import * as aiSdk from '@turnkit/ai-sdk';
import { fromAISDK, ModelCallError } from '@turnkit/ai-sdk';
import { runTurn } from '@turnkit/inline';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { chunk, completion, errorReply, type FakeOpenAIServer, sse, startFakeOpenAIServer } from '@turnkit/testing';
import { wireReply } from './wire.js';
import { drain, request, signal, userAsks } from './setup.js';

const doc = readFileSync(new URL('../../../docs/providers.md', import.meta.url), 'utf8');
const codeBlocks = [...doc.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);

let server: FakeOpenAIServer;
beforeEach(async () => {
  server = await startFakeOpenAIServer();
});
afterEach(async () => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  await server.close();
});

const example = (name: string): string => readFileSync(new URL(`../examples/${name}`, import.meta.url), 'utf8');

/** Runs an example module (it runs on import) with console.log and stdout captured. */
async function runExample(path: string): Promise<{ logged: string[]; written: string }> {
  const logged: string[] = [];
  let written = '';
  vi.stubEnv('OPENAI_COMPATIBLE_BASE_URL', server.baseURL);
  vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(' ')));
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => ((written += String(chunk)), true));
  await import(path);
  vi.restoreAllMocks();
  return { logged, written };
}

const weatherCall = { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' };

describe('docs/providers.md: a whole turn', () => {
  it('shows examples/run-turn.ts and examples/stream-turn.ts verbatim', () => {
    expect(codeBlocks).toContain(example('run-turn.ts'));
    expect(codeBlocks).toContain(example('stream-turn.ts'));
    expect(example('run-turn.ts')).toContain("'http://localhost:11434/v1'");
  });

  it('runs the runTurn example: one tool round, then the answer', async () => {
    server.reply(
      wireReply('json', { toolCalls: [weatherCall], usage: { prompt: 40, completion: 10 } }),
      wireReply('json', { text: 'Clear, 18 °C.', usage: { prompt: 70, completion: 6 } }),
    );
    const { logged } = await runExample('../examples/run-turn.js');
    expect(logged).toEqual(['stopped completed', 'Clear, 18 °C.', '2 model calls, 1 tool calls, 126 tokens']);
    expect(server.requests.map((r) => r.body.model)).toEqual(['qwen3:8b', 'qwen3:8b']);
    expect(server.requests[1]!.body.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_1',
      content: '{"city":"Paris","tempC":18,"sky":"clear"}',
    });
  });

  it('runs the streamTurn example: text as it streams, the call and its result', async () => {
    server.reply(wireReply('sse', { toolCalls: [weatherCall] }), wireReply('sse', { text: 'Clear, 18 °C.' }));
    const { logged, written } = await runExample('../examples/stream-turn.js');
    expect(written).toBe('Clear, 18 °C.');
    expect(logged).toEqual([
      '-> get_weather {"city":"Paris"}',
      '<- {"city":"Paris","tempC":18,"sky":"clear"}',
      '\nstopped after 2 model calls',
    ]);
    expect(server.requests.every((r) => r.body.stream === true)).toBe(true);
  });
});

describe('docs/providers.md', () => {
  it('imports only names @turnkit/ai-sdk exports', () => {
    const imported = codeBlocks.flatMap((code) =>
      [...code.matchAll(/import \{([^}]*)\} from '@turnkit\/ai-sdk'/g)].flatMap((match) =>
        match[1]!.split(',').map((name) => name.trim()),
      ),
    );
    expect(imported.length).toBeGreaterThan(0);
    for (const name of imported) expect(Object.keys(aiSdk), `docs import ${name}`).toContain(name);
  });

  it('runs the local-server example, streaming with usage', async () => {
    expect(doc).toContain("baseURL: 'http://localhost:11434/v1'");
    const ollama = createOpenAICompatible({ name: 'ollama', baseURL: server.baseURL, includeUsage: true });
    const model = fromAISDK(ollama('qwen3:8b'));
    server.reply(
      sse([chunk.role('qwen3:8b'), chunk.text('Hi!'), chunk.finish('stop'), chunk.usage({ prompt: 5, completion: 2 })]),
    );
    const { parts, error } = await drain(model.stream!(request(userAsks), { signal: signal() }));
    expect(error).toBeUndefined();
    expect(parts.at(-1)).toMatchObject({ type: 'finish', usage: { totalTokens: 7 }, modelId: 'qwen3:8b' });
    expect(server.requests[0]!.body.model).toBe('qwen3:8b');
  });

  it('runs the pricing example: maxCost stops the turn on the priced usage', async () => {
    expect(doc).toContain("pricing: { 'gpt-4.1-mini': { inputPerMillion: 0.4, outputPerMillion: 1.6 } },");
    expect(doc).toContain('limits: { budget: { maxCost: 0.05 } }');
    const openai = createOpenAICompatible({ name: 'openai', baseURL: server.baseURL });
    const model = fromAISDK(openai('gpt-4.1-mini'), {
      pricing: { 'gpt-4.1-mini': { inputPerMillion: 0.4, outputPerMillion: 1.6 } },
    });
    // 100,000 input and 10,000 output tokens cost 0.04 + 0.016 = 0.056, over 0.05.
    server.reply(wireReply('json', { toolCalls: [weatherCall], usage: { prompt: 100_000, completion: 10_000 } }));
    const result = await runTurn({ model, tools: [], input: 'Weather in Paris?', limits: { budget: { maxCost: 0.05 } } });
    expect(result).toMatchObject({ status: 'stopped', stopReason: 'budget_exhausted' });
    expect(result.usage.cost).toBeCloseTo(0.056, 12);
  });

  it('runs the override example', async () => {
    expect(doc).toContain('resolve: (modelId) => openai(modelId)');
    const provider = createOpenAICompatible({ name: 'local', baseURL: server.baseURL });
    const model = fromAISDK(provider('small'), { resolve: (modelId) => provider(modelId) });
    server.reply(completion({ content: 'ok', model: 'big' }));
    const response = await model.generate(request(userAsks, { modelOverride: 'big' }), { signal: signal() });
    expect(response).toMatchObject({ text: 'ok', modelId: 'big' });
    expect(server.requests.map((r) => r.body.model)).toEqual(['big']);
  });

  it("says retries are the turn's (maxModelRetries), with no adapter retry options left", () => {
    expect(doc).toContain('maxModelRetries: 4, modelRetryBackoffMs: 1000');
    expect(doc).toMatch(/never retries: retrying is the\nturn's decision/);
    expect(doc).not.toMatch(/\bmaxRetries\b|\bretryDelay\b/);
  });

  it('runs the fromAISDKError example', async () => {
    const model = fromAISDK(createOpenAICompatible({ name: 'local', baseURL: server.baseURL })('m'));
    server.reply(errorReply(401, 'Invalid API key'));
    let event: { type: 'model_failed'; error: aiSdk.ModelCallError['turnError'] } | undefined;
    try {
      await model.generate(request(userAsks), { signal: signal() });
    } catch (error) {
      expect(error).toBeInstanceOf(ModelCallError);
      event = { type: 'model_failed', error: aiSdk.fromAISDKError(error) };
    }
    expect(event?.error).toMatchObject({ kind: 'provider_error', retryable: false, data: { statusCode: 401 } });
    expect(event?.error.message).toMatch(/HTTP 401.*Invalid API key.*Check the model id, the API key/);
  });
});
