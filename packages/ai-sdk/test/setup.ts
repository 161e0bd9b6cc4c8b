// Shared test fixtures: a provider pointed at the fake server, a weather tool, request builders.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { Message, ModelRequest, ToolSpec } from '@turnkit/core';
import { ModelCallError } from '@turnkit/ai-sdk';
import { FAKE_MODEL, type FakeOpenAIServer } from '@turnkit/testing';

export const weatherTool: ToolSpec = {
  name: 'get_weather',
  description: 'Current weather for a city.',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
};

export function providerFor(server: FakeOpenAIServer) {
  return createOpenAICompatible({ name: 'fake', baseURL: server.baseURL, apiKey: 'test-key', includeUsage: true });
}

export function languageModelFor(server: FakeOpenAIServer, modelId = FAKE_MODEL) {
  return providerFor(server).chatModel(modelId);
}

export function request(messages: readonly Message[], overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { messages, tools: [weatherTool], toolChoice: 'auto', iteration: 0, ...overrides };
}

export const userAsks: readonly Message[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Weather in Paris?' },
];

export function signal(): AbortSignal {
  return new AbortController().signal;
}

/** The ModelCallError a promise rejects with (fails the test when it resolves or throws something else). */
export async function rejection(promise: Promise<unknown>): Promise<ModelCallError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ModelCallError) return error;
    throw new Error(`expected a ModelCallError, got ${String(error)}`);
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** Collects a stream; on failure returns the parts seen so far and the error. */
export async function drain<T>(stream: AsyncIterable<T>): Promise<{ parts: T[]; error: unknown }> {
  const parts: T[] = [];
  try {
    for await (const part of stream) parts.push(part);
  } catch (error) {
    return { parts, error };
  }
  return { parts, error: undefined };
}
