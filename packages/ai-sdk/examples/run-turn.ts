import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { fromAISDK } from '@turnkit/ai-sdk';
import { defineTool } from '@turnkit/dispatch';
import { runTurn } from '@turnkit/inline';
import { z } from 'zod';

// Ollama unless OPENAI_COMPATIBLE_BASE_URL names another server (vLLM, LM Studio, …).
const local = createOpenAICompatible({
  name: 'local',
  baseURL: process.env.OPENAI_COMPATIBLE_BASE_URL ?? 'http://localhost:11434/v1',
  includeUsage: true,
});

const getWeather = defineTool({
  name: 'get_weather',
  description: 'Current weather for a city.',
  input: z.object({ city: z.string() }),
  readOnly: true,
  execute: ({ city }) => ({ city, tempC: 18, sky: 'clear' }),
});

const result = await runTurn({
  model: fromAISDK(local('qwen3:8b')),
  tools: [getWeather],
  system: 'You are terse.',
  input: 'What is the weather in Paris?',
  maxModelRetries: 2, // retries of failures the provider marks retryable: 429, 5xx, network (2 is the default)
});

console.log(result.status, result.stopReason ?? result.error?.message);
console.log(result.text);
console.log(`${result.usage.modelCalls} model calls, ${result.usage.toolCalls} tool calls, ${result.usage.totalTokens} tokens`);
