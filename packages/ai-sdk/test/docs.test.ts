// Keeps docs/providers.md honest: its imports exist, and its local-server and option examples run
// (against the fake server instead of Ollama or vLLM).
import { readFileSync } from 'node:fs';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import * as aiSdk from '@turnkit/ai-sdk';
import { fromAISDK, ModelCallError } from '@turnkit/ai-sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chunk, completion, errorReply, type FakeOpenAIServer, sse, startFakeOpenAIServer } from './fake-openai-server.js';
import { drain, request, signal, userAsks } from './setup.js';

const doc = readFileSync(new URL('../../../docs/providers.md', import.meta.url), 'utf8');
const codeBlocks = [...doc.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);

let server: FakeOpenAIServer;
beforeEach(async () => {
  server = await startFakeOpenAIServer();
});
afterEach(async () => {
  await server.close();
});

describe('docs/providers.md', () => {
  it('imports only names @turnkit/ai-sdk exports', () => {
    const imported = codeBlocks.flatMap((code) =>
      [...code.matchAll(/import \{([^}]*)\} from '@turnkit\/ai-sdk'/g)].flatMap((match) => match[1]!.split(',').map((name) => name.trim())),
    );
    expect(imported.length).toBeGreaterThan(0);
    for (const name of imported) expect(Object.keys(aiSdk), `docs import ${name}`).toContain(name);
  });

  it('runs the local-server example, streaming with usage', async () => {
    expect(doc).toContain("baseURL: 'http://localhost:11434/v1'");
    const ollama = createOpenAICompatible({ name: 'ollama', baseURL: server.baseURL, includeUsage: true });
    const model = fromAISDK(ollama('qwen3:8b'));
    server.reply(sse([chunk.role('qwen3:8b'), chunk.text('Hi!'), chunk.finish('stop'), chunk.usage({ prompt: 5, completion: 2 })]));
    const { parts, error } = await drain(model.stream!(request(userAsks), { signal: signal() }));
    expect(error).toBeUndefined();
    expect(parts.at(-1)).toMatchObject({ type: 'finish', usage: { totalTokens: 7 }, modelId: 'qwen3:8b' });
    expect(server.requests[0]!.body.model).toBe('qwen3:8b');
  });

  it('runs the override and retry examples', async () => {
    const provider = createOpenAICompatible({ name: 'local', baseURL: server.baseURL });
    const model = fromAISDK(provider('small'), { resolve: (modelId) => provider(modelId), maxRetries: 3, retryDelay: () => 0 });
    server.reply(errorReply(429, 'busy'), completion({ content: 'ok', model: 'big' }));
    const response = await model.generate(request(userAsks, { modelOverride: 'big' }), { signal: signal() });
    expect(response).toMatchObject({ text: 'ok', modelId: 'big' });
    expect(server.requests.map((r) => r.body.model)).toEqual(['big', 'big']);
  });

  it('runs the toTurnError example', async () => {
    const model = fromAISDK(createOpenAICompatible({ name: 'local', baseURL: server.baseURL })('m'));
    server.reply(errorReply(401, 'Invalid API key'));
    let event: { type: 'model_failed'; error: aiSdk.ModelCallError['turnError'] } | undefined;
    try {
      await model.generate(request(userAsks), { signal: signal() });
    } catch (error) {
      expect(error).toBeInstanceOf(ModelCallError);
      event = { type: 'model_failed', error: aiSdk.toTurnError(error) };
    }
    expect(event?.error).toMatchObject({ kind: 'provider_error', retryable: false, data: { statusCode: 401 } });
    expect(event?.error.message).toMatch(/HTTP 401.*Invalid API key.*Check the model id, the API key/);
  });
});
