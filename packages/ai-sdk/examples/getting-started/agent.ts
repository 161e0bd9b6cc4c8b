import { z } from 'zod';
import { defineTool } from '@turnkit/dispatch';

// A tool: a name, a description and an input schema for the model, and the code that runs.
export const getWeather = defineTool({
  name: 'get_weather',
  description: 'Current weather for a city.',
  input: z.object({ city: z.string() }),
  readOnly: true,
  execute: ({ city }) => ({ city, tempC: 18, sky: 'clear' }),
});

export const system = 'You answer questions about the weather. Be brief.';
