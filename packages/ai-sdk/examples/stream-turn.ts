import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { fromAISDK } from '@turnkit/ai-sdk';
import { defineTool } from '@turnkit/dispatch';
import { streamTurn } from '@turnkit/stream';
import { z } from 'zod';

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

const stream = streamTurn({
  model: fromAISDK(local('qwen3:8b')),
  tools: [getWeather],
  input: 'What is the weather in Paris?',
});

for await (const event of stream) {
  if (event.type === 'text_delta') process.stdout.write(event.text);
  if (event.type === 'tool_call') console.log(`-> ${event.call.name} ${JSON.stringify(event.call.input)}`);
  if (event.type === 'tool_result') console.log(`<- ${JSON.stringify(event.result.output)}`);
}

const result = await stream.result;
console.log(`\n${result.status} after ${result.usage.modelCalls} model calls`);
