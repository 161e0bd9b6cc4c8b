import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { fromAISDK } from '@turnkit/ai-sdk';
import { runTurn } from '@turnkit/inline';
import { getWeather, system } from './agent.js';

// Any server that speaks the OpenAI Chat Completions API: Ollama on this machine unless
// OPENAI_COMPATIBLE_BASE_URL names another (vLLM, LM Studio, a hosted one).
const provider = createOpenAICompatible({
  name: 'local',
  baseURL: process.env.OPENAI_COMPATIBLE_BASE_URL ?? 'http://localhost:11434/v1',
  includeUsage: true,
});

const result = await runTurn({
  model: fromAISDK(provider('qwen3:8b')),
  tools: [getWeather],
  system,
  input: 'What is the weather in Paris?',
  limits: { maxIterations: 5, budget: { maxModelCalls: 8 } },
});
console.log(result.status, result.stopReason ?? result.error?.message);
console.log(result.text);
