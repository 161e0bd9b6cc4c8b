import { runTurn } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls, transcriptLines } from '@turnkit/testing';
import { getWeather, system } from './agent.js';

// A scripted model: one reply per model call, the same on every run, no network, no key.
const model = scriptedModel([toolCalls(call('get_weather', { city: 'Paris' })), text('Clear and 18 °C in Paris.')]);

const result = await runTurn({ model, tools: [getWeather], system, input: 'What is the weather in Paris?' });
console.log(transcriptLines(result.transcript).join('\n'));
console.log(result.status, result.output);
